"""Forward-mode AD (issue 15, first piece): dual levels, make_dual/unpack_dual, tangents through
the allowlisted ops (values and tangents against PyTorch), reverse-mode J·v, and refusals
(PyTorch's NotImplementedError) for every other op."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule
import chainrule.autograd.forward_ad as cr_fwad
from chainrule.ops._forward import _PYTORCH_NAMES, jvp_rule
from chainrule.ops._registry import OpDef

from .conftest import torch

torch_fwad = torch.autograd.forward_ad
LIBS = [(chainrule, cr_fwad), (torch, torch_fwad)]


def _np(x: Any) -> np.ndarray:
    return np.asarray(x.detach().numpy() if hasattr(x, "detach") else x)


def _run(
    lib: Any,
    fwad: Any,
    fn: Callable[..., Any],
    primals: list[np.ndarray],
    tangents: list[np.ndarray | None],
) -> tuple[np.ndarray, np.ndarray | None]:
    with fwad.dual_level():
        args = []
        for p, t in zip(primals, tangents, strict=True):
            x = lib.from_numpy(p.copy())
            args.append(x if t is None else fwad.make_dual(x, lib.from_numpy(t.copy())))
        out = fn(lib, *args)
        primal, tangent = fwad.unpack_dual(out)
        return _np(primal), None if tangent is None else _np(tangent)


def _compare(
    fn: Callable[..., Any],
    primals: list[np.ndarray],
    tangents: list[np.ndarray | None],
    exact: bool = False,
) -> None:
    ours = _run(chainrule, cr_fwad, fn, primals, tangents)
    theirs = _run(torch, torch_fwad, fn, primals, tangents)
    for a, b in zip(ours, theirs, strict=True):
        assert (a is None) == (b is None)
        if a is None:
            continue
        assert a.dtype == b.dtype and a.shape == b.shape
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            rtol = 1e-5 if a.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, equal_nan=True)


UNARY: dict[str, Callable[..., Any]] = {
    "neg": lambda lib, a: -a,
    "exp": lambda lib, a: lib.exp(a),
    "log": lambda lib, a: lib.log(a),
    "sin": lambda lib, a: lib.sin(a),
    "cos": lambda lib, a: a.cos(),
    "tanh": lambda lib, a: lib.tanh(a),
    "sigmoid": lambda lib, a: lib.sigmoid(a),
    "relu": lambda lib, a: lib.relu(a),
    "sqrt": lambda lib, a: lib.sqrt(a),
    "pow2": lambda lib, a: a**2,
    "pow0": lambda lib, a: a**0,
    "pow_half": lambda lib, a: lib.pow(a, 0.5),
    "pow_neg": lambda lib, a: a**-1.5,
    "add_number": lambda lib, a: a + 2.5,
    "mul_number": lambda lib, a: a * 3,
    "div_number": lambda lib, a: a / 3,
    "sum": lambda lib, a: a.sum(),
    "sum_dim": lambda lib, a: lib.sum(a, 1, keepdim=True),
    "mean": lambda lib, a: a.mean(),
    "mean_dim": lambda lib, a: a.mean((0, 1)),
    "clone": lambda lib, a: a.clone(),
    "view": lambda lib, a: a.view(-1),
    "reshape": lambda lib, a: a.reshape(3, 2, 1),
    "transpose": lambda lib, a: a.transpose(0, 1),
    "t": lambda lib, a: a.t(),
    "permute": lambda lib, a: a.permute(1, 0),
    "unsqueeze": lambda lib, a: a.unsqueeze(1),
    "squeeze": lambda lib, a: a.unsqueeze(0).squeeze(),
    "squeeze_dim": lambda lib, a: a.unsqueeze(2).squeeze(2),
    "expand": lambda lib, a: a.unsqueeze(0).expand(4, 2, 3),
    "select": lambda lib, a: a[1],
    "select_dim": lambda lib, a: a.select(1, 2),
    "slice": lambda lib, a: a[:, 1:],
    "slice_step": lambda lib, a: a[:, ::2],
    "ellipsis": lambda lib, a: a[...],
    "matmul_self": lambda lib, a: a @ a.t(),
}

BINARY: dict[str, Callable[..., Any]] = {
    "add": lambda lib, a, b: a + b,
    "add_alpha": lambda lib, a, b: lib.add(a, b, alpha=2.5),
    "sub": lambda lib, a, b: a - b,
    "sub_alpha": lambda lib, a, b: lib.sub(a, b, alpha=0.5),
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / b,
}

SPECIAL = np.array([[0.0, -0.0, 1.5], [np.inf, -np.inf, np.nan]])
DTYPES = [np.float32, np.float64]


def _data(shape: tuple[int, ...], dtype: Any, seed: int, positive: bool = False) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return np.abs(x) + 0.1 if positive else x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name: str, dtype: Any) -> None:
    positive = name in ("log", "sqrt", "pow_half", "pow_neg")
    x = _data((2, 3), dtype, 1, positive)
    _compare(UNARY[name], [x], [_data((2, 3), dtype, 2)])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_transposed_input_and_tangent(name: str) -> None:
    positive = name in ("log", "sqrt", "pow_half", "pow_neg")
    x = np.ascontiguousarray(_data((3, 2), np.float64, 3, positive)).T  # (2, 3), strided
    t = np.ascontiguousarray(_data((3, 2), np.float64, 4)).T
    _compare(
        lambda lib, a: (
            UNARY[name](lib, lib.from_numpy(x).t().t() * 0 + a) if False else UNARY[name](lib, a)
        ),
        [x],
        [t],
    )


@pytest.mark.parametrize(
    "name",
    [
        "exp",
        "log",
        "sin",
        "cos",
        "tanh",
        "sigmoid",
        "relu",
        "sqrt",
        "pow2",
        "pow0",
        "pow_half",
        "neg",
        "div_number",
        "mul_number",
        "add_number",
    ],
)
def test_unary_special_values(name: str) -> None:
    tangent = np.array([[1.0, 1.0, np.inf], [1.0, 0.0, 1.0]])
    _compare(UNARY[name], [SPECIAL], [tangent])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("which", ["both", "self", "other"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcasting(name: str, which: str, dtype: Any) -> None:
    a = _data((2, 3), dtype, 5)
    b = _data((3,), dtype, 6, positive=True)
    ta = _data((2, 3), dtype, 7) if which != "other" else None
    tb = _data((3,), dtype, 8) if which != "self" else None
    _compare(BINARY[name], [a, b], [ta, tb])
    _compare(lambda lib, x, y: BINARY[name](lib, y, x), [a, b], [ta, tb])


@pytest.mark.parametrize("which", ["both", "self", "other"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_special_values(name: str, which: str) -> None:
    a = np.array([0.0, 1.0, np.inf, np.nan, 2.0, 0.0])
    b = np.array([0.0, 0.0, 1.0, 1.0, np.inf, 2.0])
    ta = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.0]) if which != "other" else None
    tb = np.array([1.0, 2.0, 1.0, 1.0, 1.0, np.inf]) if which != "self" else None
    _compare(BINARY[name], [a, b], [ta, tb], exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("name", "shapes"),
    [
        ("mm", ((2, 3), (3, 4))),
        ("matmul_bmm", ((5, 2, 3), (5, 3, 4))),
        ("mv", ((2, 3), (3,))),
        ("dot", ((3,), (3,))),
        ("matmul_broadcast", ((5, 2, 3), (3, 4))),
    ],
)
@pytest.mark.parametrize("which", ["both", "self", "other"])
def test_matrix_products(name: str, shapes: Any, which: str, dtype: Any) -> None:
    fns = {
        "mm": lambda lib, a, b: lib.mm(a, b),
        "mv": lambda lib, a, b: lib.mv(a, b),
        "dot": lambda lib, a, b: lib.dot(a, b),
    }
    fn = fns.get(name, lambda lib, a, b: a @ b)
    a, b = _data(shapes[0], dtype, 9), _data(shapes[1], dtype, 10)
    ta = _data(shapes[0], dtype, 11) if which != "other" else None
    tb = _data(shapes[1], dtype, 12) if which != "self" else None
    _compare(fn, [a, b], [ta, tb])


COMPOSITIONS: dict[str, Callable[..., Any]] = {
    "mlp": lambda lib, x, w: lib.tanh(x @ w.t() + 1).sum(1).sigmoid(),
    "softplus_like": lambda lib, x, w: lib.log(1 + lib.exp(x * w)).mean(),
    "views": lambda lib, x, w: (x.t()[1:].reshape(-1) * w.view(-1)[:4]).sqrt(),
    "chain": lambda lib, x, w: ((x - w) ** 2 / (w * w + 1)).sum(),
}


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_compositions(name: str) -> None:
    x, w = _data((2, 3), np.float64, 13, True), _data((2, 3), np.float64, 14, True)
    _compare(COMPOSITIONS[name], [x, w], [_data((2, 3), np.float64, 15), None])
    _compare(
        COMPOSITIONS[name], [x, w], [_data((2, 3), np.float64, 15), _data((2, 3), np.float64, 16)]
    )


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_tangent_is_reverse_mode_jvp(name: str) -> None:
    """J·v by the double-backward trick (v^T J)^T's derivative in u equals the tangent."""
    x_np, w_np = _data((2, 3), np.float64, 17, True), _data((2, 3), np.float64, 18, True)
    v_np = _data((2, 3), np.float64, 19)
    fn = COMPOSITIONS[name]
    with cr_fwad.dual_level():
        x = chainrule.from_numpy(x_np.copy())
        w = chainrule.from_numpy(w_np.copy())
        out = fn(chainrule, cr_fwad.make_dual(x, chainrule.from_numpy(v_np.copy())), w)
        tangent = cr_fwad.unpack_dual(out).tangent
    x = chainrule.from_numpy(x_np.copy()).requires_grad_()
    y = fn(chainrule, x, w)
    u = chainrule.zeros_like(y, requires_grad=True)
    (g,) = chainrule.autograd.grad(y, x, u, create_graph=True)
    (jv,) = chainrule.autograd.grad(g, u, chainrule.from_numpy(v_np.copy()))
    np.testing.assert_allclose(tangent.numpy(), jv.numpy(), rtol=1e-12, atol=1e-12)


def test_reverse_mode_through_tangents() -> None:
    """The tangent's ops are recorded: its gradient in the primal is J·v's derivative. Inside
    the dual level the gradient has a tangent of its own (the graph saved the dual tensor:
    forward mode runs through the backward pass), as PyTorch's; after the level is exited the
    same gradient has none."""
    out = []
    for lib, fwad in LIBS:
        x = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with fwad.dual_level():
            d = fwad.make_dual(x, lib.ones(3, dtype=lib.float64))
            t = fwad.unpack_dual((d.sin() * d).sum()).tangent
            (inside,) = lib.autograd.grad(t, x, retain_graph=True)
            primal, tangent = fwad.unpack_dual(inside)
            out.append((_np(primal), _np(tangent)))
        (g,) = lib.autograd.grad(t, x)
        out.append((_np(g), None))
    (cr_inside, cr_after), (pt_inside, pt_after) = out[:2], out[2:]
    for ours, theirs in ((cr_inside, pt_inside), (cr_after, pt_after)):
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, atol=1e-14)
        if theirs[1] is not None:
            np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-14)


# ----------------------------------------------------------------------------------------------
# Levels, make_dual and unpack_dual


def _outcome(lib: Any, fwad: Any, fn: Callable[..., Any]) -> Any:
    try:
        return ("ok", fn(lib, fwad))
    except Exception as error:  # noqa: BLE001 (compared with PyTorch's)
        return (type(error).__name__, str(error))


def _same(fn: Callable[..., Any]) -> None:
    ours = _outcome(chainrule, cr_fwad, fn)
    ours = (ours[0], ours[1].replace("chainrule.", "torch.")) if type(ours[1]) is str else ours
    theirs = _outcome(torch, torch_fwad, fn)
    assert ours == theirs


def _in_level(body: Callable[..., Any]) -> Callable[..., Any]:
    def fn(lib: Any, fwad: Any) -> Any:
        with fwad.dual_level():
            return body(lib, fwad)

    return fn


X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


@pytest.mark.parametrize(
    "case",
    [
        lambda lib, fwad: fwad.make_dual(lib.tensor(X), lib.ones(2, 3)),  # no level
        _in_level(lambda lib, fwad: fwad.make_dual(lib.tensor(X), lib.ones(3, 2))),
        _in_level(lambda lib, fwad: fwad.make_dual(lib.tensor(X).int(), lib.ones(2, 3))),
        _in_level(lambda lib, fwad: fwad.make_dual(lib.tensor(X), lib.ones(2, 3).long())),
        _in_level(
            lambda lib, fwad: fwad.make_dual(
                lib.tensor(X), fwad.make_dual(lib.ones(2, 3), lib.ones(2, 3))
            )
        ),
        _in_level(
            lambda lib, fwad: fwad.make_dual(
                fwad.make_dual(lib.ones(2, 3), lib.ones(2, 3)), lib.ones(2, 3)
            )
        ),
        _in_level(lambda lib, fwad: fwad.make_dual(lib.tensor(X), lib.ones(2, 3), level=1)),
        _in_level(lambda lib, fwad: repr(fwad.unpack_dual(lib.tensor(X), level=1))),
        _in_level(
            lambda lib, fwad: fwad.unpack_dual(
                fwad.make_dual(lib.tensor(X), lib.ones(2, 3)), level=1
            )
        ),
        _in_level(lambda lib, fwad: fwad.unpack_dual(3)),
        _in_level(lambda lib, fwad: fwad.enter_dual_level()),
        _in_level(lambda lib, fwad: repr(fwad.unpack_dual(lib.tensor(X)))),
        _in_level(lambda lib, fwad: repr(fwad.make_dual(lib.tensor(X), lib.ones(2, 3)))),
        _in_level(lambda lib, fwad: repr(fwad.make_dual(lib.tensor(2.0), lib.tensor(1.0)))),
        _in_level(
            lambda lib, fwad: repr(
                fwad.make_dual(
                    lib.tensor(X, requires_grad=True) * 2, lib.ones(2, 3, dtype=lib.float64)
                )
            )
        ),
        _in_level(
            lambda lib, fwad: repr(
                fwad.unpack_dual(fwad.make_dual(lib.tensor(X), lib.ones(2, 3)) * 2)
            )
        ),
        lambda lib, fwad: fwad.exit_dual_level(),
        lambda lib, fwad: fwad.exit_dual_level(level=0),
        lambda lib, fwad: repr(fwad.unpack_dual(lib.tensor(X))),
        lambda lib, fwad: repr(fwad.unpack_dual(3)),
    ],
)
def test_api_outcomes(case: Callable[..., Any]) -> None:
    _same(case)


def test_levels_and_named_tuple() -> None:
    for lib, fwad in LIBS:
        x, t = lib.tensor(X), lib.ones(2, 3)
        with fwad.dual_level() as level:
            assert level == 0
            d = fwad.make_dual(x, t)
            assert d._base is x and d.is_leaf and not d.requires_grad
            unpacked = fwad.unpack_dual(d)
            assert type(unpacked).__name__ == "UnpackedDualTensor"
            assert unpacked._fields == ("primal", "tangent")
            assert unpacked.tangent is t and unpacked.primal._base is x
            assert fwad.unpack_dual(d[0]).tangent._base is t  # a view's tangent: the view
            assert fwad.unpack_dual(x).tangent is None
        assert fwad.unpack_dual(d).tangent is None and fwad.unpack_dual(d).primal is d
        assert fwad.enter_dual_level() == 0
        fwad.exit_dual_level()

        @fwad.dual_level()
        def decorated(lib: Any = lib, fwad: Any = fwad) -> Any:
            return fwad.unpack_dual(fwad.make_dual(lib.ones(1), lib.ones(1))).tangent

        assert decorated() is not None


def test_tangent_layout() -> None:
    for lib, fwad in LIBS:
        with fwad.dual_level():
            tangent = lib.ones(3, 2).t()
            d = fwad.make_dual(lib.zeros(2, 3), tangent)
            kept = fwad.unpack_dual(d).tangent
            assert kept is not tangent and kept.stride() == (3, 1)
            d = fwad.make_dual(lib.zeros(2, 3), lib.ones(2, 3, dtype=lib.float64))
            assert fwad.unpack_dual(d).tangent.dtype == lib.float64


def test_grad_fn_of_dual_of_leaf_requiring_grad() -> None:
    names = []
    for lib, fwad in LIBS:
        with fwad.dual_level():
            d = fwad.make_dual(lib.ones(2, requires_grad=True), lib.ones(2))
            names.append(d.grad_fn.name())
    assert names[0] == names[1] == "ViewBackward0"


# ----------------------------------------------------------------------------------------------
# Refusals: no op drops a tangent


NOT_IMPLEMENTED = (
    "Trying to use forward AD with {} that does not support it because it has not been "
    "implemented yet.\nPlease file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
    "prioritize its implementation or submit a PR adding the implementation to derivatives.yaml"
)


def test_message_is_pytorchs() -> None:
    with torch_fwad.dual_level():
        d = torch_fwad.make_dual(torch.ones(1, 1, 3), torch.ones(1, 1, 3))
        with pytest.raises(NotImplementedError) as caught:
            torch.cdist(d, d)
    assert str(caught.value) == NOT_IMPLEMENTED.format("_cdist_forward")


def _all_ops() -> list[OpDef]:
    import gc

    seen: dict[int, OpDef] = {}
    for obj in gc.get_objects():
        if type(obj) is OpDef:
            seen[id(obj)] = obj
    return sorted(seen.values(), key=lambda o: (o.name, o.node_name))


REFUSING = [o for o in _all_ops() if jvp_rule(o) is None and o.differentiable]


@pytest.mark.parametrize("opdef", REFUSING, ids=[f"{o.name}-{o.node_name}" for o in REFUSING])
def test_op_without_rule_refuses(opdef: OpDef) -> None:
    """Each differentiable op of the table without a JVP rule refuses a dual input (through its
    propagation step, given the op's own forward result): never a result without tangent."""
    from chainrule.ops._forward import propagate

    with cr_fwad.dual_level():
        d = cr_fwad.make_dual(chainrule.ones(2), chainrule.ones(2))
        args = list(opdef.defaults)
        args[opdef.input_pos[0]] = d
        result = chainrule.ones(2)
        with pytest.raises(NotImplementedError) as caught:
            propagate(opdef, tuple(args), result)
    # (named as PyTorch names it where chainrule's op has another name: torch.cholesky)
    name = _PYTORCH_NAMES.get(opdef.node_name, opdef.name)
    assert str(caught.value) == NOT_IMPLEMENTED.format(name)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, d: lib.complex(d, d),
        lambda lib, d: lib.polar(d, d),
        lambda lib, d: lib.view_as_complex(lib.stack([d, d], -1)),
        lambda lib, d: d * (1 + 1j),
    ],
)
def test_real_to_complex_calls_carry_tangents(call: Callable[..., Any]) -> None:
    """Complex results of real dual inputs: the tangent PyTorch gives (complex)."""
    tangents = []
    for lib, fwad in ((torch, torch_fwad), (chainrule, cr_fwad)):
        with fwad.dual_level():
            d = fwad.make_dual(lib.tensor([1.0, 0.5, -2.0]), lib.tensor([0.25, -1.0, 3.0]))
            tangent = fwad.unpack_dual(call(lib, d)).tangent
            tangents.append(tangent.detach().resolve_conj().numpy())
    assert tangents[1].dtype == tangents[0].dtype
    np.testing.assert_allclose(tangents[1], tangents[0], rtol=1e-6)


def _tangent_list(fwad: Any, t: Any) -> Any:
    tangent = fwad.unpack_dual(t).tangent
    return None if tangent is None else tangent.tolist()


IN_PLACE: dict[str, Callable[..., Any]] = {
    # each returns what to compare: tensors' primals and tangents after the writes
    "mutates_the_given_tangent": lambda lib, fw: (
        lambda t: (lambda d: (d.mul_(2), t)[1])(fw.make_dual(lib.tensor([1.0, 2.0, 3.0]), t))
    )(lib.tensor([1.0, 2.0, 3.0])),
    "base_gets_tangent_old_view_sees_it": lambda lib, fw: (
        lambda x: (
            lambda v: (x.add_(fw.make_dual(lib.ones(3), lib.tensor([1.0, 2.0, 3.0]))), x, v)[1:]
        )(x[:2])
    )(lib.zeros(3)),
    "view_written_base_sees_it": lambda lib, fw: (
        lambda y: (
            lambda row: (row.copy_(fw.make_dual(lib.ones(3), lib.tensor([4.0, 5.0, 6.0]))), y, row)[
                1:
            ]
        )(y[1])
    )(lib.zeros(2, 3)),
    "base_written_view_sees_it": lambda lib, fw: (
        lambda z: (lambda col: (z.mul_(3), col)[1:])(z[:, 0])
    )(fw.make_dual(lib.zeros(2, 2), lib.ones(2, 2))),
    "transposed_view_after_add": lambda lib, fw: (
        lambda b: (lambda bt: (b.add_(1), bt)[1:])(b.t())
    )(fw.make_dual(lib.ones(2, 2), lib.ones(2, 2))),
    "setitem_dual": lambda lib, fw: (
        lambda w: (
            w.__setitem__(slice(1, 3), fw.make_dual(lib.ones(2), lib.tensor([7.0, 8.0]))),
            w,
        )[1:]
    )(lib.zeros(4)),
    "setitem_number": lambda lib, fw: (lambda q: (q.__setitem__(0, 5.0), q)[1:])(
        fw.make_dual(lib.ones(3), lib.ones(3))
    ),
    "setitem_mask": lambda lib, fw: (
        lambda q: (q.__setitem__(q > 1, fw.make_dual(lib.zeros(()), lib.tensor(4.0))), q)[1:]
    )(fw.make_dual(lib.tensor([1.0, 2.0, 3.0]), lib.ones(3))),
    "zero_": lambda lib, fw: (fw.make_dual(lib.ones(3), lib.ones(3)).zero_(),),
    "relu_": lambda lib, fw: (fw.make_dual(lib.tensor([1.0, -2.0]), lib.ones(2)).relu_(),),
    "gt_no_tangent": lambda lib, fw: (
        lambda a: (a.gt_(fw.make_dual(lib.zeros(3), lib.ones(3))), a)[1:]
    )(lib.ones(3)),
    "t_": lambda lib, fw: (fw.make_dual(lib.ones(2, 3), lib.arange(6.0).reshape(2, 3)).t_(),),
    "unsqueeze_then_write": lambda lib, fw: (lambda d: (d.unsqueeze_(0), d.mul_(3), d)[2:])(
        fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]))
    ),
    "chain_of_views": lambda lib, fw: (
        lambda x: (lambda v: (v[0].mul_(fw.make_dual(lib.tensor(2.0), lib.tensor(5.0))), x, v)[1:])(
            x[1:]
        )
    )(lib.ones(3)),
    "index_put_": lambda lib, fw: (
        lambda x: (
            x.index_put_((lib.tensor([0, 2]),), fw.make_dual(lib.ones(2), lib.tensor([3.0, 4.0]))),
            x,
        )[1:]
    )(lib.zeros(3)),
    "copy_plain_into_dual": lambda lib, fw: (
        fw.make_dual(lib.ones(2), lib.ones(2)).copy_(lib.tensor([5.0, 6.0])),
    ),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_tangents_follow_views(name: str) -> None:
    """In-place writes update the tangent in place; views and bases share it (PyTorch's)."""
    results = []
    for lib, fwad in LIBS:
        with fwad.dual_level():
            tensors = IN_PLACE[name](lib, fwad)
            results.append([(_np(t).tolist(), _tangent_list(fwad, t)) for t in tensors])
    assert results[0] == results[1]


@pytest.mark.parametrize(
    "write",
    [
        lambda lib, d, x: d.mul_(2j),
        lambda lib, d, x: x.__setitem__(0, d[0] * 1j),
    ],
)
def test_complex_in_place_with_tangent_refuses(write: Callable[..., Any]) -> None:
    with cr_fwad.dual_level():
        d = cr_fwad.make_dual(chainrule.ones(3), chainrule.ones(3))
        x = chainrule.zeros(3, dtype=chainrule.complex64)
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with"):
            write(chainrule, d, x)
        assert x.tolist() == [0j, 0j, 0j]


def test_in_place_without_tangent_and_non_differentiable_ops() -> None:
    for lib, fwad in LIBS:
        with fwad.dual_level():
            x = lib.ones(3)
            d = fwad.make_dual(x, lib.ones(3))
            x.add_(1)  # the base has no tangent: the view's stays as it is
            assert fwad.unpack_dual(d).tangent.tolist() == [1.0, 1.0, 1.0]
            assert d.tolist() == [2.0, 2.0, 2.0]
            assert fwad.unpack_dual(d.eq(2)).tangent is None
            assert fwad.unpack_dual(d.argmax()).tangent is None
            assert fwad.unpack_dual(d.detach()).tangent is None


def test_custom_function_refuses() -> None:
    for lib, fwad in LIBS:

        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any) -> Any:
                return a * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * 2

        with fwad.dual_level():
            d = fwad.make_dual(lib.ones(2), lib.ones(2))
            with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
                Double.apply(d)


def _dual_pair(lib: Any, fwad: Any, g: Any) -> tuple[Any, Any, bool]:
    primal, tangent = fwad.unpack_dual(g)
    return _np(primal), None if tangent is None else _np(tangent), g.requires_grad


def _assert_same_dual(ours: tuple, theirs: tuple) -> None:
    """Primal, tangent (or None) and requires_grad of two :func:`_dual_pair` results."""
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, atol=1e-14)
    assert (ours[1] is None) == (theirs[1] is None)
    if theirs[1] is not None:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-14)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("create_graph", [False, True])
def test_backward_from_a_dual_output(create_graph: bool) -> None:
    """Forward mode through a backward pass (forward-over-reverse) from outputs with tangents:
    the gradient's primal, tangent and requires_grad are PyTorch's; backward() fills ``.grad``
    without a tangent, as PyTorch's AccumulateGrad, but for create_graph (a recorded copy)."""
    found = []
    for lib, fwad in LIBS:
        x = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with fwad.dual_level():
            d = fwad.make_dual(x, lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
            y = lib.softmax(d, 0) * d.exp()
            v = lib.tensor([1.0, -1.0, 0.5], dtype=lib.float64)
            (g,) = lib.autograd.grad(y, d, v, create_graph=create_graph, retain_graph=True)
            (gx,) = lib.autograd.grad(y, x, v, create_graph=create_graph, retain_graph=True)
            y.sum().backward(create_graph=create_graph)
            found.append(
                (_dual_pair(lib, fwad, g), _dual_pair(lib, fwad, gx), _dual_pair(lib, fwad, x.grad))
            )
    assert (found[0][2][1] is None) == (found[1][2][1] is None) == (not create_graph)
    for ours, theirs in zip(found[0], found[1], strict=True):
        _assert_same_dual(ours, theirs)


def test_tangent_of_a_saved_output_and_a_dual_cotangent() -> None:
    """A node re-wraps its saved output (exp, tanh, sigmoid save their result) with the tangent
    the output had, also once the output tensor is gone; a cotangent with a tangent carries it
    through the (linear) backward formulas."""
    found = []
    for lib, fwad in LIBS:
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with fwad.dual_level():
            d = fwad.make_dual(x, lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
            y = (d.exp().tanh().sigmoid() * 2).sum()
            (g,) = lib.autograd.grad(y, x, retain_graph=True)
            u = fwad.make_dual(
                lib.ones(3, dtype=lib.float64), lib.tensor([5.0, -7.0, 0.25], dtype=lib.float64)
            )
            (h,) = lib.autograd.grad(d.sin() * 3, x, u)
            found.append([_dual_pair(lib, fwad, g), _dual_pair(lib, fwad, h)])
    for ours, theirs in zip(found[0], found[1], strict=True):
        _assert_same_dual(ours, theirs)


def test_no_level_no_tangents() -> None:
    x = chainrule.ones(2)
    assert cr_fwad.unpack_dual(x.sin()).tangent is None


@pytest.mark.parametrize("mode", ["complete", "r"])
def test_qr_modes_without_forward_derivative(mode: str) -> None:
    """linalg.qr's modes that are not differentiable: PyTorch's errors, in forward mode too."""
    messages = []
    for lib, fwad in LIBS:
        a = np.random.default_rng(0).uniform(-1, 1, (4, 3))
        with fwad.dual_level():
            d = fwad.make_dual(lib.from_numpy(a.copy()), lib.from_numpy(a.copy()))
            with pytest.raises(RuntimeError) as caught:
                lib.linalg.qr(d, mode=mode)
            messages.append(str(caught.value))
    assert messages[0] == messages[1]


# ----------------------------------------------------------------------------------------------
# Reverse mode inside a dual level, from outputs without tangents: a gradient through a graph
# that saved a tensor with a tangent has a tangent, as PyTorch's (the backward formulas run on
# the dual tensors); backward() into .grad gives none (PyTorch's .grad has no tangent either),
# nor does a graph that saved no tangent.


def _saved_dual_graph(lib: Any, x: Any) -> Any:
    fw = lib.autograd.forward_ad
    w = fw.make_dual(lib.tensor([3.0, 4.0], dtype=x.dtype), lib.tensor([1.0, 1.0], dtype=x.dtype))
    return fw.unpack_dual((x * w).sin()).primal.sum()


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_through_saved_tangents_has_pytorchs_tangent(create_graph: bool) -> None:
    found = []
    for lib, fwad in LIBS:
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with fwad.dual_level():
            (g,) = lib.autograd.grad(_saved_dual_graph(lib, x), x, create_graph=create_graph)
            found.append(_dual_pair(lib, fwad, g))
        assert x.grad is None
    _assert_same_dual(found[0], found[1])


def test_backward_through_saved_tangents_fills_grad_as_pytorch() -> None:
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with lib.autograd.forward_ad.dual_level():
            _saved_dual_graph(lib, x).backward()
            assert lib.autograd.forward_ad.unpack_dual(x.grad).tangent is None
        grads.append(x.grad.tolist())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-15)


def test_grad_of_a_graph_without_saved_tangents_runs_in_a_dual_level() -> None:
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with lib.autograd.forward_ad.dual_level():
            lib.autograd.forward_ad.make_dual(lib.tensor([3.0, 4.0]), lib.tensor([1.0, 1.0]))
            (g,) = lib.autograd.grad((x.exp() * 2).sum(), x)
            assert lib.autograd.forward_ad.unpack_dual(g).tangent is None
        grads.append(g.tolist())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-15)


def test_setitem_outside_forward_mode_writes_once_and_makes_no_tangent() -> None:
    # (the forward-mode setitem was bound as Tensor.__setitem__ for every write: it wrote the
    # values, then created and wrote a zero tangent, and warned twice)
    from chainrule.autograd import forward_grad

    x = chainrule.zeros(2, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x[[slice(None), 0]] = 1.0  # (a deprecated index: one warning, as PyTorch's)
    assert len([w for w in caught if "non-tuple sequence" in str(w.message)]) == 1
    assert x.tolist() == [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]] and x._version == 1
    assert not forward_grad._TANGENTS
