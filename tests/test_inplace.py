"""In-place ops, version counters and views: same values, histories, gradients and errors as
PyTorch."""

from __future__ import annotations

import re

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _names(fn) -> list:
    if fn is None:
        return []
    return [None if n is None else type(n).__name__ for n, _ in fn.next_functions]


def _run(program: str, lib):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
    scope = {"lib": lib, "w": w, "v": v}
    exec(program, scope)  # noqa: S102 - the programs below
    return scope


PROGRAMS = [
    # history of a non-leaf rewritten by the op
    "y = w * 1; y.add_(v)",
    "y = w * 1; y.mul_(v)",  # mul_ needs y's old value for v's gradient (saved as a snapshot)
    "y = w * 1; y.div_(v)",
    "y = w * 1; y.pow_(2)",
    "y = w * 1; y.exp_()",  # exp_ saves its output: the tensor itself, at its new version
    "y = w * 1; y.relu_()",
    "y = w * 1; y.clamp_(1.5, 2.5)",
    "y = w * 1; y.neg_(); y.sub_(v, alpha=2)",
    "y = w * 1; y.zero_()",
    "y = w * 1; y.fill_(2.0)",
    "y = w * 1; y.copy_(v)",
    "y = w * 1; y.masked_fill_(y > 1.5, 0.0)",
    "y = w * 1; y += v; y *= 2; y -= 1; y /= 4",
    "y = lib.zeros(3); y.add_(w)",  # a tensor that did not require grad now does
    "y = lib.zeros(3); y.copy_(w)",
    # in-place on views: CopySlices on the base
    "y = w * 2; y[0].mul_(3)",
    "y = w * 2; y[1:].add_(v[1:])",
    "y = w * 2; y[::2].exp_()",
    "y = (w * 1).view(3, 1); y[:, 0].mul_(v)",
    "y = w * 2; t = y[0:2]; y.mul_(3); y = t * 1",  # an older view picks up the new history
    "y = w * 1; z = y.view(3); z.mul_(v)",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_inplace_program_matches_pytorch(program: str) -> None:
    ours, theirs = _run(program, chainrule), _run(program, torch)
    y, ty = ours["y"], theirs["y"]
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-6)
    assert y.requires_grad == ty.requires_grad
    assert y.is_leaf == ty.is_leaf
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    assert _names(y.grad_fn) == [None if n is None else type(n).__name__
                                 for n, _ in ty.grad_fn.next_functions]
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    for name in ("w", "v"):
        g, tg = ours[name].grad, theirs[name].grad
        if tg is None:
            assert g is None or not g.numpy().any(), name
        else:
            np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-5, err_msg=name)


ERROR_PROGRAMS = [
    "w.add_(1)",
    "w[0].add_(1)",
    "w.view(3, 1).mul_(2)",
    "w.zero_()",
    "w[0] = 1.0",
    "y = w.exp(); y.add_(1); y.sum().backward()",
    "y = w * 2; z = y.exp(); y2 = y.sin(); y.mul_(2); y2.sum().backward()",
    "y = w * 2; y.exp_(); z = y * 1; y.add_(1); z.sum().backward()",
    "y = w * 1; y.sigmoid_(); y.tanh_(); y.sum().backward()",
    "lib.zeros(3, dtype=lib.int64).add_(1.5)",
    "lib.zeros(3).add_(lib.ones(2, 3))",
    "lib.zeros(2, 3).add_(lib.ones(3, 3))",
    "lib.ones(3).expand(2, 3).add_(1)",
]


@pytest.mark.parametrize("program", ERROR_PROGRAMS)
def test_inplace_errors_match_pytorch(program: str) -> None:
    def message(lib):
        with pytest.raises(Exception) as info:
            _run(program, lib)
        return info.type, str(info.value)

    ours, theirs = message(chainrule), message(torch)
    assert ours[0] is theirs[0]
    expected = theirs[1].replace("torch.", "chainrule.")
    assert ours[1].startswith(expected.split(" Hint:")[0])


def test_modified_error_names_where_the_tensor_was_modified() -> None:
    w = chainrule.tensor([1.0, 2.0], requires_grad=True)
    y = w.exp()
    y.add_(1)  # the line the error must name
    line = test_modified_error_names_where_the_tensor_was_modified.__code__.co_firstlineno + 3
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert re.search(rf"last modified in place at .*test_inplace\.py:{line}\b", str(info.value))
    assert w.grad is None


def test_versions_are_shared_by_views_and_not_by_data() -> None:
    for lib in (chainrule, torch):
        x = lib.zeros(4)
        v = x[1:3]
        v.add_(1)
        assert x._version == v._version == 1
        x.data.add_(1)  # .data is invisible to autograd
        assert x._version == 1
        x.detach().add_(1)  # detach shares the version counter
        assert x._version == 2
        assert x.tolist() == [2.0, 3.0, 3.0, 2.0]


def test_inplace_on_leaf_under_no_grad_is_allowed() -> None:
    """The SGD update: parameters change in place, their version moves, no history."""
    for lib in (chainrule, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        with lib.no_grad():
            w -= 0.1 * w.grad
        assert w.is_leaf and w.requires_grad and w.grad_fn is None
        assert w._version == 1
        np.testing.assert_allclose(w.detach().numpy(), [0.8, 1.6], rtol=1e-6)


def test_inplace_returns_self_and_keeps_identity() -> None:
    x = chainrule.ones(3)
    assert x.add_(1) is x
    y = x
    y += 1
    assert y is x and x.tolist() == [3.0, 3.0, 3.0]


def test_saved_input_snapshot_gives_the_old_values() -> None:
    """mul_ overwrites y, but v's gradient needs y's old value (PyTorch saves a copy too)."""
    for lib in (chainrule, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        v = lib.tensor([3.0, 4.0], requires_grad=True)
        y = w + 0
        y.mul_(v)
        y.sum().backward()
        np.testing.assert_allclose(v.grad.numpy(), [1.0, 2.0])
        np.testing.assert_allclose(w.grad.numpy(), [3.0, 4.0])


def test_copy_slices_second_order() -> None:
    results = []
    for lib in (chainrule, torch):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = w * w
        y[1:].mul_(w[:2])
        (g,) = lib.autograd.grad(y.sum(), w, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), w)
        results.append((g.detach().numpy().copy(), gg.numpy().copy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


def test_inplace_on_a_custom_function_view_is_refused_like_pytorch() -> None:
    messages = []
    for lib in (chainrule, torch):

        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return g

        y = Identity.apply(lib.ones(2, requires_grad=True).clone())
        with pytest.raises(RuntimeError) as info:
            y.add_(1)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


# ----------------------------------------------------------------------------------------------
# retain_grad and in-place ops: .grad is the gradient of the tensor's current value


def _fmt(t) -> object:
    return None if t is None else t.detach().numpy().astype(float).tolist()


def _assert_same(ours, theirs) -> None:
    """Equal structure; numbers equal to float32 precision."""
    if isinstance(ours, list | tuple) and ours and isinstance(ours[0], float):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    elif isinstance(ours, list | tuple):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _assert_same(a, b)
    else:
        assert ours == theirs


RETAIN_PROGRAMS = [
    # retain_grad, then an in-place op on the tensor itself
    "a = w.clone(); a.retain_grad(); a.mul_(2); loss = a.sum()",
    "a = w.clone(); a.retain_grad(); a.mul_(2); a.add_(1); loss = (a * a).sum()",
    "a = w * 1; a.retain_grad(); a.mul_(v); loss = (a * v).sum()",
    "a = w * 1; a.retain_grad(); a.exp_(); loss = (a * a).sum()",
    "a = w * 1; a.retain_grad(); a[1] = 5.0; loss = (a * v).sum()",
    "a = w * 1; a.retain_grad(); a[[0, 2]] = v[:2]; loss = (a * a).sum()",
    # retain_grad on a base, in place through a view of it
    "a = w * 1; a.retain_grad(); a[:2].mul_(3); loss = (a * lib.tensor([1., 2., 3.])).sum()",
    "a = w * 1; a.retain_grad(); a[1:].mul_(v[1:]); loss = (a * a).sum()",
    "a = (w * 1).view(3, 1); a.retain_grad(); a[:, 0].exp_(); loss = (a * a).sum()",
    # retain_grad on a view, in place through it or through its base
    "b = w * 1; a = b[:2]; a.retain_grad(); a.mul_(3); loss = (a * v[:2]).sum()",
    "b = w * 1; a = b[:2]; a.retain_grad(); b.mul_(3); loss = (a * v[:2]).sum()",
    "b = w * 1; a = b[:2]; a.retain_grad(); b[1:].mul_(3); loss = (a * a).sum()",
    "b = w * 1; a = b[:2]; a.retain_grad(); a.mul_(3); loss = (b * v).sum()",
    # retain_grad after the in-place op; hooks registered before stay with the old value
    "a = w * 1; a.mul_(2); a.retain_grad(); loss = (a * a).sum()",
    "a = w * 1; h = a.register_hook(lambda g: g * 10); a.retain_grad(); a.mul_(2); "
    "loss = (a * a).sum()",
]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("program", RETAIN_PROGRAMS)
def test_retain_grad_follows_inplace_ops_like_pytorch(program: str, create_graph: bool) -> None:
    results = []
    for lib in (chainrule, torch):
        scope = _run(program, lib)
        a, loss = scope["a"], scope["loss"]
        if create_graph:
            grads = lib.autograd.grad(loss, [scope["w"], scope["v"]], create_graph=True,
                                      allow_unused=True)
            # second order through the retained gradient's history
            second = None
            if a.grad is not None and a.grad.requires_grad:
                (second,) = lib.autograd.grad(a.grad.sum(), [scope["w"]], allow_unused=True)
            results.append((
                _fmt(a.grad), a.grad is not None and a.grad.requires_grad,
                [_fmt(g) for g in grads], _fmt(second), a.retains_grad,
            ))
        else:
            loss.backward()
            results.append((
                _fmt(a.grad), _fmt(scope["w"].grad), _fmt(scope["v"].grad), a.retains_grad,
            ))
    _assert_same(results[0], results[1])


def test_retain_grad_follows_mark_dirty() -> None:
    results = []
    for lib in (chainrule, torch):

        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x.mul_(2)

            @staticmethod
            def backward(ctx, g):
                return g * 2

        w = lib.tensor([1.0, 2.0], requires_grad=True)
        a = w * 1
        a.retain_grad()
        Double.apply(a)
        (a * a).sum().backward()
        results.append((_fmt(a.grad), _fmt(w.grad)))
    _assert_same(results[0], results[1])


# ----------------------------------------------------------------------------------------------
# Views PyTorch forbids modifying in place: made in no_grad or inference mode, by an op
# returning several views, or by a custom Function; and detach(), which is allowed


def _view_program(program: str, lib) -> tuple:
    """Run ``program``; its outcome (``("ok",)`` or the error) and its variables."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)

    class Ident(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.view_as(a)

        @staticmethod
        def backward(ctx, g):
            return g

    class Same(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    scope = {"lib": lib, "x": x, "Ident": Ident, "Same": Same}
    try:
        exec(program, scope)  # noqa: S102 - the programs below
        outcome: tuple = ("ok",)
    except Exception as error:  # noqa: BLE001 - compared with PyTorch's
        message = str(error).replace("torch.", "chainrule.")
        # (beyond PyTorch, chainrule says where the tensor was modified)
        outcome = (type(error).__name__, re.sub(r" The tensor was last modified .*", "", message))
    return outcome, scope


def _node_names(item) -> object:
    if isinstance(item, tuple):
        return tuple(_node_names(i) for i in item)
    if item is None or isinstance(item, bool | int):
        return item
    return type(item).__name__


VIEW_PROGRAMS = [
    # made in no_grad / inference mode, modified with grad mode on
    "y = x * 2\nwith lib.no_grad(): v = y[:2]\nv.mul_(3)\ny.sum().backward()",
    "y = x * 2\nwith lib.inference_mode(): v = y[:2]\nv.mul_(3)\ny.sum().backward()",
    "with lib.no_grad(): v = x[:2]\nv.mul_(2)",
    "y = x * 2\nwith lib.no_grad(): v = y.view(3)\nv.zero_()",
    "y = x * 2\nwith lib.no_grad(): v = y[:2]\nv[0] = 5.0",
    "y = x * 2\nwith lib.no_grad(): v = y[:2]\nv[[0]] = 5.0",
    "y = x * 2\nwith lib.no_grad(): v = y[:2]\nv2 = v[:1]\nv2.mul_(3)",
    "y = lib.zeros(3)\nwith lib.no_grad(): v = y[:2]\nv.add_(x[:2])",
    "y = lib.zeros(3)\nwith lib.no_grad(): v = y[:2]\nv += x[:2]",
    "y = lib.zeros(3)\nwith lib.no_grad(): v = y[:2]\nv.copy_(x[:2])",
    "y = x * 2\nwith lib.no_grad(): v, w = y.unbind()[:2]\nv.mul_(2)",
    # allowed: both in no_grad, or the base modified (not the view) and the view unused
    "y = x * 2\nwith lib.no_grad():\n    v = y[:2]\n    v.mul_(3)\ny.sum().backward()",
    "y = x * 2\nwith lib.no_grad(): v = y[:2]\ny[0] = 5.0\ny.sum().backward()",
    # modified through its base (or a detached alias): the error comes when the view is used
    "y = x * 2\nwith lib.no_grad(): v = y[:2]\ny.mul_(3)\nz = v * 2",
    "y = x * 2\nwith lib.no_grad():\n    v = y[:2]\n    v.mul_(3)\nz = v.grad_fn",
    "y = x * 2\nwith lib.no_grad(): v = y[:2]\nv.detach().mul_(3)\nz = v * 2",
    "y = x * 2\nwith lib.no_grad(): v = y[:2]\ny.mul_(3)\nwith lib.no_grad(): z = v * 2",
    # a no-grad view of a tensor that requires grad: requires grad, gradients go nowhere
    "y = x * 2\nwith lib.no_grad(): v = y[:2]\nz = v * 2\nz.sum().backward()\n"
    "r = (v.requires_grad, v.is_leaf, v.grad_fn, z.grad_fn.next_functions)",
    "y = x * 2\nwith lib.no_grad(): v = y[:2]\nv2 = v[:1]\n"
    "r = (v2.requires_grad, v2.grad_fn.next_functions)",
    "y = x * 2\nwith lib.no_grad(): v = y[0]\nv.backward()",
    "y = x * 2\nwith lib.no_grad(): v = y[:2]\n(v * 2).sum().backward(inputs=[v])\n"
    "r = (v.grad, v.retains_grad)",
    "y = x * 2\nwith lib.no_grad(): v = y[:2]\nr = lib.autograd.grad((v * 2).sum(), v)",
    # multi-output views
    "y = x * 2\nv = y.unbind()[0]\nv.mul_(3)",
    "y = x * 2\nv = y.unbind()[1]\nv.add_(1)",
    "y = x * 2\nv = y.split(1)[0]\nv.mul_(3)",
    "y = x * 2\nv = y.split(2)[1]\nv.exp_()",
    "y = x * 2\nv = y.split(3)[0]\nv.mul_(3)",
    "y = x * 2\nv = y.chunk(3)[0]\nv.mul_(3)",
    "y = x * 2\nv = y.chunk(1)[0]\nv.mul_(3)",
    "y = x * 2\nv = y.split([1, 2])[1]\nv.mul_(3)",
    "y = x * 2\nv = y.split([3])[0]\nv.mul_(3)",
    "y = x * 2\nv = list(y)[0]\nv.mul_(3)",
    "y = x * 2\nv = y.unbind()[0].view(1)\nv.mul_(3)",
    "y = x * 2\nv = y.unbind()[0]\nv[...] = 1.0",
    "y = x * 2\na, b, c = y.unbind()\ny.mul_(3)\nz = a * 2",
    "y = x * 2\na, b, c = y.unbind()\nb.detach().mul_(3)\nz = a * 2",
    "y = x * 2\na, b, c = y.unbind()\nwith lib.no_grad(): b.mul_(3)\nz = (a * 2, y.grad_fn)",
    # allowed: tensor_split and unflatten give ordinary views; no grad involved at all
    "y = x * 2\nv = y.tensor_split(3)[0]\nv.mul_(3)\ny.sum().backward()",
    "y = x * 2\nv = y.unflatten(0, (3, 1))\nv.mul_(3)\ny.sum().backward()",
    "y = (x * 2).detach()\na, b, c = y.unbind()\na.mul_(2)\nz = y",
    "y = x * 2\na = y.unbind()[0]\nwith lib.no_grad(): a.mul_(2)\ny.sum().backward()",
    # detach(): not a view; shares the version counter
    "y = x * 2\nd = y.detach()\nd.mul_(3)\ny.sum().backward()",
    "y = (x * 2).exp()\nd = y.detach()\nd.mul_(3)\ny.sum().backward()",
    "d = x.detach()\nd.mul_(3)\nz = x * 1",
    # custom Function outputs that are views
    "y = x * 2\nv = Ident.apply(y)\nv.mul_(3)",
    "y = x * 2\nv = Same.apply(y)\nv.mul_(3)",
    "y = x * 2\nv = Ident.apply(y)\nw = v[:1]\nw.mul_(2)",
    "y = x * 2\nv = Ident.apply(y)\ny.mul_(2)\nz = v * 2",
    "y = x * 2\nv = Ident.apply(y)\nwith lib.no_grad(): v.mul_(2)\nz = v * 2",
    "y = x * 2\nv = Ident.apply(y)\nv.sum().backward()",
]


@pytest.mark.parametrize("program", VIEW_PROGRAMS)
def test_forbidden_view_modifications_match_pytorch(program: str) -> None:
    """Same error (raised before anything changed) or same values and gradients."""
    results = []
    for lib in (chainrule, torch):
        outcome, scope = _view_program(program, lib)
        summary = {"x": _fmt(scope["x"]), "x.grad": _fmt(scope["x"].grad)}
        for name in ("y", "v"):
            if name in scope:
                summary[name] = _fmt(scope[name])
        if "r" in scope:
            summary["r"] = _node_names(scope["r"])
        results.append((outcome, summary))
    ours, theirs = results
    assert ours[0] == theirs[0]
    assert sorted(ours[1]) == sorted(theirs[1])
    for key in ours[1]:
        if key == "r":
            assert ours[1][key] == theirs[1][key]
        else:
            _assert_same(ours[1][key], theirs[1][key])
