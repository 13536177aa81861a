"""What nodes save for backward, compared with PyTorch: what ``saved_tensors_hooks`` see (how
many tensors, in which order, which are inputs and which the output, their values and
histories), the ``grad_fn._saved_*`` attributes with and without hooks, and gradients when a
pack hook changes what is saved."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import normalise_output, torch
from .outcomes import attempt

LIBS = (chainrule, torch)


def _inputs(lib) -> tuple:
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 1.5, (3, 4))
    b = rng.uniform(0.5, 1.5, (3, 4))
    w = rng.uniform(-1.0, 1.0, (4, 2))
    return (
        lib.tensor(a, dtype=lib.float64, requires_grad=True),
        lib.tensor(b, dtype=lib.float64, requires_grad=True),
        lib.tensor(w, dtype=lib.float64, requires_grad=True),
        lib.tensor(b, dtype=lib.float64),  # a constant
    )


# name -> fn(lib, x, y, w, c): one op (or a short program ending in the op whose node is
# looked at). PyTorch saves what its derivatives.yaml formulas read; chainrule must save the
# same tensors.
OPS: dict[str, Any] = {
    "mul": lambda lib, x, y, w, c: x * y,
    "mul_const": lambda lib, x, y, w, c: x * c,
    "mul_const_left": lambda lib, x, y, w, c: c * y,
    "mul_number": lambda lib, x, y, w, c: x * 2.5,
    "div": lambda lib, x, y, w, c: x / y,
    "div_by_const": lambda lib, x, y, w, c: x / c,
    "div_const": lambda lib, x, y, w, c: c / y,
    "exp": lambda lib, x, y, w, c: x.exp(),
    "tanh": lambda lib, x, y, w, c: x.tanh(),
    "sigmoid": lambda lib, x, y, w, c: x.sigmoid(),
    "sqrt": lambda lib, x, y, w, c: x.sqrt(),
    "log": lambda lib, x, y, w, c: x.log(),
    "sin": lambda lib, x, y, w, c: x.sin(),
    "matmul": lambda lib, x, y, w, c: x @ w,
    "mm_const": lambda lib, x, y, w, c: x.mm(w.detach()),
    "linear": lambda lib, x, y, w, c: lib.nn.functional.linear(x, w.t()),
    "sum": lambda lib, x, y, w, c: x.sum(),
    "sum_dim": lambda lib, x, y, w, c: x.sum(1),
    "mean": lambda lib, x, y, w, c: x.mean(),
    "index_list": lambda lib, x, y, w, c: x[[0, 2]],
    "index_tensor": lambda lib, x, y, w, c: x[lib.tensor([2, 0, 2])],
    "index_mask": lambda lib, x, y, w, c: x[x > 1.0],
    "index_two": lambda lib, x, y, w, c: x[[0, 1], [1, 3]],
    "index_after_slice": lambda lib, x, y, w, c: x[1:, [0, 3]],
    "index_int32": lambda lib, x, y, w, c: x[lib.tensor([2, 0], dtype=lib.int32)],
    "index_uint8_mask": lambda lib, x, y, w, c: _quietly(
        lambda: x[lib.tensor([1, 0, 1], dtype=lib.uint8)]),
    "index_bool": lambda lib, x, y, w, c: x[True],
    "index_bool_tensor": lambda lib, x, y, w, c: x[:, lib.tensor(False)],
    "relu": lambda lib, x, y, w, c: (x - 1).relu(),
    "softmax": lambda lib, x, y, w, c: x.softmax(1),
    "log_softmax": lambda lib, x, y, w, c: x.log_softmax(1),
    "cat": lambda lib, x, y, w, c: lib.cat([x, y]),
    "gather": lambda lib, x, y, w, c: x.gather(1, lib.tensor([[0], [3], [1]])),
    "index_select": lambda lib, x, y, w, c: x.index_select(1, lib.tensor([3, 0])),
    "masked_fill": lambda lib, x, y, w, c: x.masked_fill(x > 1.0, 0.0),
    "where": lambda lib, x, y, w, c: lib.where(x > 1.0, x, y),
    "setitem_list": lambda lib, x, y, w, c: _setitem(x * 1, [0, 2], y[1]),
    "setitem_mask": lambda lib, x, y, w, c: _setitem(x * 1, x > 1.0, 0.0),
    "mul_": lambda lib, x, y, w, c: (x * 1).mul_(y),
    # nn's in-place activations pack what PyTorch's in-place nodes pack
    "F.hardtanh_": lambda lib, x, y, w, c: lib.nn.functional.hardtanh_(x * 1, 0.5, 1.5),
    "F.silu_inplace": lambda lib, x, y, w, c: lib.nn.functional.silu(x * 1, inplace=True),
    "F.threshold_": lambda lib, x, y, w, c: lib.nn.functional.threshold_(x * 1, 1.0, -2.0),
    "F.hardswish_inplace": lambda lib, x, y, w, c: lib.nn.functional.hardswish(
        x * 1, inplace=True),
    "F.mish_inplace": lambda lib, x, y, w, c: lib.nn.functional.mish(x * 1, inplace=True),
    "F.elu_": lambda lib, x, y, w, c: lib.nn.functional.elu_(x * 1),
    "F.leaky_relu_": lambda lib, x, y, w, c: lib.nn.functional.leaky_relu_(x - 1, 0.2),
    "ReLU_inplace": lambda lib, x, y, w, c: lib.nn.ReLU(inplace=True)(x - 1),
    "exp_": lambda lib, x, y, w, c: (x * 1).exp_(),
    "view_mul_": lambda lib, x, y, w, c: _view_mul_(x * 1, y),
    "abs": lambda lib, x, y, w, c: (x - 1).abs(),
    "clamp": lambda lib, x, y, w, c: x.clamp(0.7, 1.2),
    "max": lambda lib, x, y, w, c: x.max(),
    "unbind_stack": lambda lib, x, y, w, c: lib.stack(x.unbind()),
    "view_expand": lambda lib, x, y, w, c: x[:1].expand(3, 4).t(),
    # pow saves (self, exponent, result) in PyTorch, in all its forms
    "pow": lambda lib, x, y, w, c: x ** y,
    "pow_number": lambda lib, x, y, w, c: x ** 3,
    "rpow": lambda lib, x, y, w, c: 2.0 ** x,  # PyTorch also saves x: chainrule does not
    "pow_0d_exponent": lambda lib, x, y, w, c: x ** lib.tensor(2.0, dtype=lib.float64),
    # layers and losses (nn.functional)
    "nll_loss": lambda lib, x, y, w, c: _f(lib).nll_loss(x, lib.tensor([0, 3, 1])),
    "nll_loss_sum": lambda lib, x, y, w, c: _f(lib).nll_loss(x, lib.tensor([0, 3, 1]),
                                                             reduction="sum"),
    "nll_loss_weight_ignore": lambda lib, x, y, w, c: _f(lib).nll_loss(
        x, lib.tensor([0, 3, 1]), weight=c[0], ignore_index=3),
    "nll_loss2d": lambda lib, x, y, w, c: _f(lib).nll_loss(
        x.view(1, 3, 2, 2), lib.tensor([[[0, 2], [1, 1]]])),
    "cross_entropy": lambda lib, x, y, w, c: _f(lib).cross_entropy(x, lib.tensor([0, 3, 1])),
    "layer_norm": lambda lib, x, y, w, c: _f(lib).layer_norm(x, (4,), y[0], y[1]),
    # (of x * y: the gradient of x alone sums to 0 along each row, to second order too)
    "layer_norm_no_affine": lambda lib, x, y, w, c: _f(lib).layer_norm(x * y, (4,)),
    "layer_norm_2d": lambda lib, x, y, w, c: _f(lib).layer_norm(x, (3, 4), y),
    "batch_norm_train": lambda lib, x, y, w, c: _f(lib).batch_norm(
        x, c[0] * 0, c[1] * 1, y[0], y[1], training=True),
    "batch_norm_train_no_stats": lambda lib, x, y, w, c: _f(lib).batch_norm(
        x * y, None, None, training=True),
    "batch_norm_eval": lambda lib, x, y, w, c: _f(lib).batch_norm(x, c[0] * 0, c[1] * 1, y[0]),
    "group_norm": lambda lib, x, y, w, c: _f(lib).group_norm(x, 2, y[0], y[1]),
    "conv1d": lambda lib, x, y, w, c: _f(lib).conv1d(x.unsqueeze(0), y.view(2, 3, 2)),
    "conv1d_bias": lambda lib, x, y, w, c: _f(lib).conv1d(x.unsqueeze(0), y.view(2, 3, 2),
                                                          w[0]),
    "conv_transpose1d": lambda lib, x, y, w, c: _f(lib).conv_transpose1d(
        x.unsqueeze(0), y.view(3, 2, 2)),
    "max_pool1d": lambda lib, x, y, w, c: _f(lib).max_pool1d(x, 2),
    "max_pool2d": lambda lib, x, y, w, c: _f(lib).max_pool2d(x.unsqueeze(0), 2, 1),
    "avg_pool2d": lambda lib, x, y, w, c: _f(lib).avg_pool2d(x.unsqueeze(0), 2, 1),
    "adaptive_avg_pool2d": lambda lib, x, y, w, c: _f(lib).adaptive_avg_pool2d(
        x.unsqueeze(0), 2),
    "adaptive_max_pool2d": lambda lib, x, y, w, c: _f(lib).adaptive_max_pool2d(
        x.unsqueeze(0), 2),
    "embedding": lambda lib, x, y, w, c: _f(lib).embedding(lib.tensor([2, 0, 2]), x),
    "mse_loss": lambda lib, x, y, w, c: _f(lib).mse_loss(x, y),
    "l1_loss": lambda lib, x, y, w, c: _f(lib).l1_loss(x, y),
    "smooth_l1_loss": lambda lib, x, y, w, c: _f(lib).smooth_l1_loss(x, y * 2),
    "huber_loss": lambda lib, x, y, w, c: _f(lib).huber_loss(x, y * 2),
    "binary_cross_entropy": lambda lib, x, y, w, c: _f(lib).binary_cross_entropy(
        x / 2, y / 2),
    "binary_cross_entropy_weight": lambda lib, x, y, w, c: _f(lib).binary_cross_entropy(
        x / 2, y / 2, weight=c),
    # (x / 4, y / 4: still probabilities once a pack hook doubles them)
    "binary_cross_entropy_quarter": lambda lib, x, y, w, c: _f(lib).binary_cross_entropy(
        x / 4, y / 4),
    "binary_cross_entropy_quarter_weight_sum": lambda lib, x, y, w, c: (
        _f(lib).binary_cross_entropy(x / 4, y / 4, weight=c, reduction="sum")),
    "binary_cross_entropy_with_logits": lambda lib, x, y, w, c: (
        _f(lib).binary_cross_entropy_with_logits(x, y / 2)),
    "pad_reflect": lambda lib, x, y, w, c: _f(lib).pad(x.unsqueeze(0), (1, 1), mode="reflect"),
}


def _f(lib):
    return lib.nn.functional


#: Ops whose saved tensors are not PyTorch's yet (strict xfails), with the reason.
KNOWN_DIFFERENCES: dict[str, str] = {}


def _names() -> list:
    return [pytest.param(name, marks=pytest.mark.xfail(strict=True,
                                                       reason=KNOWN_DIFFERENCES[name]))
            if name in KNOWN_DIFFERENCES else name for name in sorted(OPS)]



def _quietly(run):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (uint8 indices are deprecated, in both)
        return run()


def _setitem(t, index, value):
    t[index] = value
    return t


def _view_mul_(t, y):
    t[:2].mul_(y[:2])
    return t


def _fmt(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple | list):
        return tuple(_fmt(v) for v in value)
    data = value.detach().numpy()
    if data.dtype.kind == "f":
        data = data.round(10)
    return (tuple(data.shape), str(value.dtype).split(".")[-1], data.tolist())


def _role(t: Any, inputs: tuple, output: Any) -> str:
    for i, x in enumerate(inputs):
        if t is x:
            return f"input {i}"
    if t is output:
        return "output"
    return "other"


def _node_name(t: Any) -> Any:
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _packed(lib, name: str) -> list:
    """What the pack hook sees while the op runs."""
    inputs = _inputs(lib)
    seen: list = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        out = OPS[name](lib, *inputs)
    return [
        (_role(t, inputs, out), _fmt(t), t.requires_grad, _node_name(t), t.is_leaf)
        for t in seen
    ]


@pytest.mark.parametrize("name", _names())
def test_pack_hook_sees_what_pytorch_saves(name: str) -> None:
    ours, theirs = _packed(chainrule, name), _packed(torch, name)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a[0] == b[0] and a[2:] == b[2:]
        assert a[1][:2] == b[1][:2]
        np.testing.assert_allclose(a[1][2], b[1][2], rtol=1e-12)


def _attribute_names(lib, node: Any) -> list[str]:
    return sorted(n for n in dir(node) if n.startswith("_saved_"))


def _saved_attributes(lib, name: str, hooks: bool) -> dict[str, Any]:
    """``grad_fn._saved_*`` of the op's node: tensors described (role, value, history)."""
    inputs = _inputs(lib)
    unpacked: list = []
    if hooks:
        with lib.autograd.graph.saved_tensors_hooks(
            lambda t: t.detach().clone(), lambda p: unpacked.append(1) or p
        ):
            out = OPS[name](lib, *inputs)
    else:
        out = OPS[name](lib, *inputs)
    node = out.grad_fn
    result: dict[str, Any] = {}
    for attribute in _attribute_names(lib, node):
        value = getattr(node, attribute)
        if isinstance(value, lib.Tensor):
            value = (
                _role(value, inputs, out), _fmt(value), value.requires_grad,
                _node_name(value) if value.grad_fn is not node else "the node",
            )
        elif isinstance(value, tuple) and value and isinstance(value[0], lib.Tensor | None):
            value = ("tensor list",) + tuple(
                None if v is None else (_role(v, inputs, out), _fmt(v)) for v in value
            )
        result[attribute] = value
    result["unpack calls"] = len(unpacked)
    return result


def _tensor_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """The attributes holding saved tensors (or None: not needed by this node)."""
    return {
        k: v for k, v in attributes.items()
        if k == "unpack calls" or v is None
        or (isinstance(v, tuple) and v and isinstance(v[0], str)
            and v[0].startswith(("input", "output", "other", "tensor list")))
    }


@pytest.mark.parametrize("hooks", [False, True], ids=["plain", "hooks"])
@pytest.mark.parametrize("name", _names())
def test_saved_tensor_attributes_match_pytorch(name: str, hooks: bool) -> None:
    """The tensor ``_saved_*`` attributes: which exist, each one's identity (the input itself
    without hooks), value and history, and how often the unpack hook is called. (Number
    attributes are not compared: chainrule keeps e.g. ``sum``'s dim as an int, PyTorch as a
    tuple, and mm's strides it does not keep.)"""
    ours = _tensor_attributes(_saved_attributes(chainrule, name, hooks))
    theirs = _tensor_attributes(_saved_attributes(torch, name, hooks))
    assert normalise_output(str(sorted(ours.items()))) == normalise_output(
        str(sorted(theirs.items()))
    )


def _double_floats(t: Any) -> Any:
    return t * 2 if t.is_floating_point() else t  # (index tensors and masks kept)


def _scaled_gradients(lib, name: str) -> list:
    """First and second derivatives when the pack hook doubles what it packs: the gradients
    then show exactly which saved tensors the backward formulas read, and how."""
    inputs = _inputs(lib)
    differentiable = [t for t in inputs if t.requires_grad]
    with lib.autograd.graph.saved_tensors_hooks(_double_floats, lambda t: t):
        out = OPS[name](lib, *inputs)
    firsts = lib.autograd.grad((out * out).sum(), differentiable, create_graph=True,
                               allow_unused=True)
    results = [None if g is None else g.detach().numpy().copy() for g in firsts]
    total = sum(g.sum() for g in firsts if g is not None and g.requires_grad)
    if isinstance(total, lib.Tensor):
        seconds = lib.autograd.grad(total, differentiable, allow_unused=True)
        results += [None if g is None else g.numpy().copy() for g in seconds]
    return results


@pytest.mark.parametrize("name", _names())
def test_gradients_through_a_scaling_pack_hook_match_pytorch(name: str) -> None:
    ours, theirs = _scaled_gradients(chainrule, name), _scaled_gradients(torch, name)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        if b is None:
            assert a is None or not a.any()
        else:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# The rules around the hooks



def test_pack_hook_may_not_modify_its_input() -> None:
    results = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)

        def pack(t):
            t.mul_(2)  # in no_grad mode (the hook runs in it), so allowed: then refused
            return t

        def run(lib=lib, x=x, pack=pack):
            with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                return x * x

        outcome = attempt(run)
        results.append((outcome[0], outcome[1], x.tolist(), x._version))
    assert results[0] == results[1]
    assert results[0][0] == "RuntimeError"


def test_pack_hook_runs_in_no_grad_mode() -> None:
    results = []
    for lib in LIBS:
        modes: list = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(
            lambda t, modes=modes, lib=lib: modes.append(lib.is_grad_enabled()) or t * 1,
            lambda t: t,
        ):
            y = x.exp()
        results.append((modes, y.grad_fn._saved_result.requires_grad))
    assert results[0] == results[1]


@pytest.mark.parametrize("returned", ["int", "array", "none"])
def test_unpack_hook_must_return_a_tensor(returned: str) -> None:
    results = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        value = {"int": 1, "array": np.ones(2), "none": None}[returned]
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p, value=value: value):
            y = (x * x).sum()
        results.append((attempt(y.backward), x.grad))
    assert results[0][0] == results[1][0]
    assert results[0][1] is None and results[1][1] is None


def test_saved_output_shares_the_output_version_counter() -> None:
    results = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = x.exp()
        saved = y.grad_fn._saved_result
        before = (saved is y, saved.grad_fn is y.grad_fn, saved._version)
        y.detach().add_(1)
        results.append((before, saved._version, y._version, _fmt(saved)))
        x2 = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x2 * 1
        z = h * h
        results.append((z.grad_fn._saved_self is h, (x2 * x2).grad_fn._saved_self is x2))
    assert results[0] == results[2] and results[1] == results[3]


def test_unpacked_tensors_get_the_saved_history_back() -> None:
    """With hooks that copy: the unpacked tensor has the saved tensor's grad_fn (or, for a
    leaf, reaches its .grad), and the version counter of what unpack returned."""
    results = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        c = lib.tensor([3.0, 4.0, 5.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda p: p):
            h = x * 1
            z = h * h
            w = x * x
            e = x.exp()
            k = x * c
        on_h = z.grad_fn._saved_self
        on_x = w.grad_fn._saved_self
        on_e = e.grad_fn._saved_result
        on_c = k.grad_fn._saved_other
        h.detach().add_(1)
        (g,) = lib.autograd.grad((on_x * 2).sum(), x)
        results.append((
            on_h is h, on_h.grad_fn is h.grad_fn, on_h._version, on_x.is_leaf,
            on_x.requires_grad, g.tolist(), on_e is e, on_e.grad_fn is e.grad_fn,
            on_c.requires_grad, on_c.grad_fn,
        ))
    assert results[0] == results[1]


def test_saved_tensors_through_hooks_are_freed_by_backward() -> None:
    results = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda p: p):
            y = x.exp()
            z = x[[0, 1, 1]]
        y.sum().backward()
        z.sum().backward()
        results.append((
            attempt(lambda y=y: y.grad_fn._saved_result),
            attempt(lambda z=z: z.grad_fn._saved_indices),
            attempt(lambda z=z: z.sum().backward()),
        ))
    assert results[0] == results[1]


def test_saved_index_tensor_modified_in_place_is_refused() -> None:
    results = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        i = lib.tensor([0, 2])
        y = x[i]
        first = y.grad_fn._saved_indices[0] is i
        i.add_(1)
        outcome = attempt(lambda y=y: y.sum().backward())
        results.append((first, outcome[0], outcome[1].split(" Hint:")[0], x.grad))
    assert results[0] == results[1]


def _custom_function_through_hooks(lib) -> tuple:
    log: list = []
    seen: list = []

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            out = a * a
            ctx.save_for_backward(a, out)
            return out

        @staticmethod
        def backward(ctx, g):
            a, out = ctx.saved_tensors
            log.append((a.requires_grad, _node_name(a), out.requires_grad, out.grad_fn is not None))
            return 2 * a * g

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(
        lambda t: seen.append((t is x, t.requires_grad)) or t * 2, lambda t: t
    ):
        y = Square.apply(x)
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x)
    return seen, log, g.tolist(), gg.tolist()


def test_custom_function_saved_tensors_through_hooks() -> None:
    assert _custom_function_through_hooks(chainrule) == _custom_function_through_hooks(torch)



def test_inplace_dropout_backward_under_hooks() -> None:
    """Random, so not compared value by value: the in-place dropout's node packs the written
    tensor and the mask (it crashed: the packed record was read as the saved arguments)."""
    x = chainrule.randn(6, requires_grad=True)
    seen: list[tuple[int, ...]] = []
    with chainrule.autograd.graph.saved_tensors_hooks(
        lambda t: seen.append(tuple(t.shape)) or t, lambda t: t
    ):
        y = chainrule.nn.functional.dropout(x * 1, 0.5, inplace=True)
    (g,) = chainrule.autograd.grad(y.sum(), x)
    assert seen  # the node packed through the hook
    np.testing.assert_array_equal(g.numpy(), (y.detach().numpy() != 0) * 2.0)


def _group_norm_with_statistics(lib: Any, x: np.ndarray, terms: tuple[str, ...]) -> list:
    """What a backward from group norm's output and/or its saved statistics gives."""
    t = lib.tensor(x, requires_grad=True)
    w = lib.linspace(0.5, 1.5, 4, dtype=lib.float64).requires_grad_()
    out = lib.nn.functional.group_norm(t, 2, w)
    node = out.grad_fn
    mean, rstd = node._saved_result1, node._saved_result2
    seen = [(s.requires_grad, s.output_nr, s.grad_fn is node, tuple(s.shape)) for s in (mean, rstd)]
    loss = {"out": out.pow(2).sum(), "mean": mean.sum() * 3, "rstd": rstd.sum()}
    sum(loss[name] for name in terms).backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        node._saved_result1  # noqa: B018 (freed by that backward)
    numbers = (node._saved_N, node._saved_C, node._saved_HxW, node._saved_group, node._saved_eps)
    return [seen, numbers, t.grad, w.grad]


@pytest.mark.parametrize("terms", [("out",), ("out", "mean"), ("out", "rstd"),
                                   ("out", "mean", "rstd"), ("mean",), ("mean", "rstd")])
def test_group_norm_statistics_are_outputs_of_its_node(terms) -> None:
    """PyTorch's NativeGroupNormBackward0 saves its mean and rstd as its outputs 1 and 2: they
    require grad with the node as ``grad_fn``. Their gradients count only when both got one
    (then ``d mean / dx`` and ``d rstd / dx`` join the input's gradient); the weight's
    gradient comes from the main output only; the numbers stay readable after release."""
    x = np.random.default_rng(3).uniform(-1, 1, (3, 4, 5))
    ours, theirs = (_group_norm_with_statistics(lib, x, terms) for lib in LIBS)
    assert ours[:2] == theirs[:2]
    for mine, reference in zip(ours[2:], theirs[2:], strict=True):
        assert (mine is None) == (reference is None)
        if mine is not None:
            np.testing.assert_allclose(mine.numpy(), reference.numpy(), rtol=1e-12, atol=1e-13)


def test_numbers_stay_readable_after_release() -> None:
    """PyTorch frees a node's saved tensors in backward but keeps its saved numbers."""
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y, z = x.sub(x * 2, alpha=3), x.pow(2.5)
        (y.sum() + z.sum()).backward()
        assert y.grad_fn._saved_alpha == 3 and z.grad_fn._saved_exponent == 2.5
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            z.grad_fn._saved_self  # noqa: B018
