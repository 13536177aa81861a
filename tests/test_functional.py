"""``autograd.functional`` and ``chainrule.func`` give PyTorch's values, shapes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import assert_close, normalise_output, torch

LIBS = (chainrule, torch)
RNG = np.random.default_rng(0)
X0 = RNG.standard_normal((2, 3))
Y0 = RNG.standard_normal(3)
Z0 = np.array(0.7)


def _inputs(lib, names: str, requires_grad: bool = False):
    arrays = {"x": X0, "y": Y0, "z": Z0}
    made = tuple(lib.tensor(arrays[n].copy(), requires_grad=requires_grad) for n in names)
    return made[0] if len(made) == 1 else made


def _compare(ours, theirs, what: str = "") -> None:
    """Same nesting (tuples vs lists vs tensors), same values, dtypes, requires_grad."""
    if isinstance(theirs, tuple | list):
        assert type(ours) is type(theirs), f"{what}: {type(ours)} != {type(theirs)}"
        assert len(ours) == len(theirs), what
        for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _compare(a, b, f"{what}[{k}]")
        return
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs), what
        for key in theirs:
            _compare(ours[key], theirs[key], f"{what}[{key!r}]")
        return
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, chainrule.Tensor), what
        assert_close(ours, theirs, rtol=1e-10, atol=1e-12, what=what)
        assert ours.requires_grad == theirs.requires_grad, f"{what}: requires_grad"
        assert (ours.grad_fn is None) == (theirs.grad_fn is None), f"{what}: grad_fn"
        return
    assert ours == theirs, what


def _error(fn) -> tuple[str, str]:
    with pytest.raises(Exception) as info:  # noqa: PT011 - compared with PyTorch's
        fn()
    return type(info.value).__name__, normalise_output(str(info.value))


def _same_error(make) -> str:
    ours = _error(lambda: make(chainrule))
    theirs = _error(lambda: make(torch))
    assert ours == theirs
    return ours[1]


# ----------------------------------------------------------------------------------------------
# autograd.functional


def _f_reduce(a):
    return a.exp().sum(dim=1)


def _f_pair(a, b):
    return a * b, (a ** 2).sum()


def _f_scalar(a, b):
    return (a ** 3 * b).sum()


def _f_cube(a):
    return (a ** 3).sum()


def _ones(lib, *shape):
    return lib.ones(*shape, dtype=lib.float64)


CASES = {
    "vjp": lambda F, lib, cg: F.vjp(_f_reduce, _inputs(lib, "x"), _ones(lib, 2), create_graph=cg),
    "vjp_tuple": lambda F, lib, cg: F.vjp(
        _f_pair, _inputs(lib, "xy"), (_ones(lib, 2, 3), lib.tensor(2.0, dtype=lib.float64)),
        create_graph=cg,
    ),
    "vjp_scalar_no_v": lambda F, lib, cg: F.vjp(_f_cube, _inputs(lib, "y"), create_graph=cg),
    "vjp_unused": lambda F, lib, cg: F.vjp(
        lambda a, b: a * 2, _inputs(lib, "yy"), _ones(lib, 3), create_graph=cg
    ),
    "jvp": lambda F, lib, cg: F.jvp(_f_reduce, _inputs(lib, "x"), _ones(lib, 2, 3),
                                    create_graph=cg),
    "jvp_tuple": lambda F, lib, cg: F.jvp(
        _f_pair, _inputs(lib, "xy"), (_ones(lib, 2, 3), _ones(lib, 3)), create_graph=cg
    ),
    "jvp_scalar_input": lambda F, lib, cg: F.jvp(lambda a: a.sin() * 2, _inputs(lib, "z"),
                                                 create_graph=cg),
    "jacobian": lambda F, lib, cg: F.jacobian(_f_reduce, _inputs(lib, "x"), create_graph=cg),
    "jacobian_tuple": lambda F, lib, cg: F.jacobian(_f_pair, _inputs(lib, "xy"),
                                                    create_graph=cg),
    "jacobian_tuple_in": lambda F, lib, cg: F.jacobian(
        lambda a, b: a.sum() * b, _inputs(lib, "xy"), create_graph=cg
    ),
    "jacobian_vectorize": lambda F, lib, cg: F.jacobian(
        _f_pair, _inputs(lib, "xy"), create_graph=cg, vectorize=True
    ),
    "jacobian_scalar": lambda F, lib, cg: F.jacobian(lambda a: a * a, _inputs(lib, "z"),
                                                     create_graph=cg),
    "hessian": lambda F, lib, cg: F.hessian(_f_cube, _inputs(lib, "y"), create_graph=cg),
    "hessian_tuple": lambda F, lib, cg: F.hessian(_f_scalar, _inputs(lib, "xy"),
                                                  create_graph=cg),
    "hessian_vectorize": lambda F, lib, cg: F.hessian(_f_scalar, _inputs(lib, "xy"),
                                                      create_graph=cg, vectorize=True),
    "vhp": lambda F, lib, cg: F.vhp(_f_cube, _inputs(lib, "y"), _ones(lib, 3), create_graph=cg),
    "vhp_tuple": lambda F, lib, cg: F.vhp(
        _f_scalar, _inputs(lib, "xy"), (_ones(lib, 2, 3), _ones(lib, 3)), create_graph=cg
    ),
    "hvp": lambda F, lib, cg: F.hvp(_f_cube, _inputs(lib, "y"), _ones(lib, 3), create_graph=cg),
    "hvp_tuple": lambda F, lib, cg: F.hvp(
        _f_scalar, _inputs(lib, "xy"), (_ones(lib, 2, 3), _ones(lib, 3)), create_graph=cg
    ),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_functional_matches_pytorch(case: str, create_graph: bool) -> None:
    ours = CASES[case](chainrule.autograd.functional, chainrule, create_graph)
    theirs = CASES[case](torch.autograd.functional, torch, create_graph)
    _compare(ours, theirs, case)


def test_create_graph_results_are_differentiable_like_pytorch() -> None:
    results = []
    for lib in LIBS:
        x = _inputs(lib, "y", requires_grad=True)
        _, v = lib.autograd.functional.vjp(_f_cube, x, create_graph=True)
        h = lib.autograd.functional.hessian(_f_cube, x, create_graph=True)
        (gx,) = lib.autograd.grad((v * v).sum() + h.sum(), x)
        results.append((gx, type(h.grad_fn).__name__))
    assert_close(results[0][0], results[1][0], rtol=1e-10, atol=1e-12)
    assert results[0][1] == results[1][1] == "ViewBackward0"


def test_forward_mode_strategy() -> None:
    for make in (
        lambda F, lib: F.jacobian(_f_pair, _inputs(lib, "xy"), vectorize=True,
                                  strategy="forward-mode"),
        lambda F, lib: F.jacobian(_f_reduce, _inputs(lib, "x"), vectorize=True,
                                  strategy="forward-mode"),
    ):
        ours = make(chainrule.autograd.functional, chainrule)
        theirs = make(torch.autograd.functional, torch)
        _compare(ours, theirs)
    ours = chainrule.autograd.functional.hessian(
        _f_cube, _inputs(chainrule, "y"), vectorize=True, outer_jacobian_strategy="forward-mode"
    )
    theirs = torch.autograd.functional.hessian(
        _f_cube, _inputs(torch, "y"), vectorize=True, outer_jacobian_strategy="forward-mode"
    )
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


def _unused_second(a, b):
    return a * 2


FUNCTIONAL_ERRORS = {
    "strict_unused": lambda F, lib: F.vjp(_unused_second, _inputs(lib, "yy"), _ones(lib, 3),
                                          strict=True),
    "strict_constant_output": lambda F, lib: F.vjp(lambda a: lib.ones(3), _inputs(lib, "y"),
                                                   _ones(lib, 3), strict=True),
    "v_needed": lambda F, lib: F.vjp(_f_reduce, _inputs(lib, "x")),
    "v_size": lambda F, lib: F.vjp(_f_reduce, _inputs(lib, "x"), _ones(lib, 3)),
    "v_length": lambda F, lib: F.vjp(_f_pair, _inputs(lib, "xy"), (_ones(lib, 2, 3),)),
    "v_entry_size": lambda F, lib: F.vjp(_f_pair, _inputs(lib, "xy"),
                                         (_ones(lib, 2, 3), _ones(lib, 2))),
    "inputs_list": lambda F, lib: F.vjp(_f_reduce, [_inputs(lib, "x")]),
    "inputs_number": lambda F, lib: F.vjp(_f_reduce, (_inputs(lib, "x"), 3)),
    "output_number": lambda F, lib: F.vjp(lambda a: 3, _inputs(lib, "x")),
    "jvp_v_needed": lambda F, lib: F.jvp(_f_reduce, _inputs(lib, "x")),
    "jacobian_strict": lambda F, lib: F.jacobian(_unused_second, _inputs(lib, "yy"), strict=True),
    "jacobian_strict_create_graph": lambda F, lib: F.jacobian(
        lambda a: a * 2, _inputs(lib, "y"), strict=True, create_graph=True
    ),
    "jacobian_strict_vectorize": lambda F, lib: F.jacobian(
        _f_reduce, _inputs(lib, "x"), strict=True, vectorize=True
    ),
    "jacobian_strategy": lambda F, lib: F.jacobian(_f_reduce, _inputs(lib, "x"), strategy="x"),
    "forward_mode_not_vectorized": lambda F, lib: F.jacobian(
        _f_reduce, _inputs(lib, "x"), strategy="forward-mode"
    ),
    "forward_mode_create_graph": lambda F, lib: F.jacobian(
        _f_reduce, _inputs(lib, "x"), strategy="forward-mode", create_graph=True
    ),
    "forward_mode_strict": lambda F, lib: F.jacobian(
        _f_reduce, _inputs(lib, "x"), strategy="forward-mode", strict=True
    ),
    "hessian_not_scalar": lambda F, lib: F.hessian(lambda a: a * 2, _inputs(lib, "y")),
    "hessian_tuple_output": lambda F, lib: F.hessian(lambda a: (a, a), _inputs(lib, "y")),
    "hessian_strict_linear": lambda F, lib: F.hessian(lambda a: (a * 2).sum(), _inputs(lib, "y"),
                                                      strict=True),
    "vhp_strict_linear": lambda F, lib: F.vhp(lambda a: (a * 2).sum(), _inputs(lib, "y"),
                                              _ones(lib, 3), strict=True),
    "hvp_not_scalar": lambda F, lib: F.hvp(lambda a: a ** 2, _inputs(lib, "y"), _ones(lib, 3)),
    "vhp_v_needed": lambda F, lib: F.vhp(_f_cube, _inputs(lib, "y")),
}


@pytest.mark.parametrize("case", sorted(FUNCTIONAL_ERRORS))
def test_functional_errors_match_pytorch(case: str) -> None:
    _same_error(lambda lib: FUNCTIONAL_ERRORS[case](
        chainrule.autograd.functional if lib is chainrule else torch.autograd.functional, lib
    ))


# ----------------------------------------------------------------------------------------------
# chainrule.func


def _cube_sum(x):
    return (x ** 3).sum()


def _with_aux(x):
    return (x ** 2).sum(), {"double": x * 2}


FUNC_CASES = {
    "grad": lambda fn, lib: fn.grad(_cube_sum)(_inputs(lib, "y")),
    "grad_grad": lambda fn, lib: fn.grad(fn.grad(lambda x: x ** 3))(_inputs(lib, "z")),
    "grad_grad_grad": lambda fn, lib: fn.grad(fn.grad(fn.grad(lambda x: x.sin() * x)))(
        _inputs(lib, "z")
    ),
    "grad_argnums": lambda fn, lib: fn.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(
        _inputs(lib, "y"), _inputs(lib, "y") + 1
    ),
    "grad_argnum_1": lambda fn, lib: fn.grad(lambda a, b: (a * b.exp()).sum(), argnums=1)(
        _inputs(lib, "y"), _inputs(lib, "y")
    ),
    "grad_negative_argnum": lambda fn, lib: fn.grad(lambda a, b: (a * b).sum(), argnums=-1)(
        _inputs(lib, "y"), _inputs(lib, "y")
    ),
    "grad_has_aux": lambda fn, lib: fn.grad(_with_aux, has_aux=True)(_inputs(lib, "y")),
    "grad_dict": lambda fn, lib: fn.grad(lambda d: (d["a"] * d["b"]).sum())(
        {"a": _inputs(lib, "y"), "b": _inputs(lib, "y") * 2}
    ),
    "grad_unused": lambda fn, lib: fn.grad(lambda x, y: (y * 2).sum())(
        _inputs(lib, "y"), _inputs(lib, "y")
    ),
    "grad_and_value": lambda fn, lib: fn.grad_and_value(_cube_sum)(_inputs(lib, "y")),
    "grad_and_value_aux": lambda fn, lib: fn.grad_and_value(_with_aux, has_aux=True)(
        _inputs(lib, "y")
    ),
    "vjp": lambda fn, lib: fn.vjp(lambda x: x ** 2, _inputs(lib, "x"))[1](_ones(lib, 2, 3)),
    "vjp_output": lambda fn, lib: fn.vjp(lambda x: x ** 2, _inputs(lib, "x"))[0],
    "vjp_tuple": lambda fn, lib: fn.vjp(_f_pair, *_inputs(lib, "xy"))[1](
        (_ones(lib, 2, 3), lib.tensor(1.0, dtype=lib.float64))
    ),
    "vjp_aux": lambda fn, lib: fn.vjp(lambda x: (x.sin(), x.sum()), _inputs(lib, "y"),
                                      has_aux=True)[2],
    "jacrev": lambda fn, lib: fn.jacrev(lambda x: x.exp() * x.sum())(_inputs(lib, "y")),
    "jacrev_matrix": lambda fn, lib: fn.jacrev(_f_reduce)(_inputs(lib, "x")),
    "jacrev_argnums": lambda fn, lib: fn.jacrev(_f_pair, argnums=(0, 1))(*_inputs(lib, "xy")),
    "jacrev_aux": lambda fn, lib: fn.jacrev(lambda x: (x ** 2, {"k": x.sum()}), has_aux=True)(
        _inputs(lib, "y")
    ),
    "jacrev_constant": lambda fn, lib: fn.jacrev(lambda x: lib.ones(2, dtype=lib.float64))(
        _inputs(lib, "y")
    ),
    "jacrev_jacrev": lambda fn, lib: fn.jacrev(fn.jacrev(lambda x: x.sin() * x.sum()))(
        _inputs(lib, "y")
    ),
    "jacrev_jacrev_argnums": lambda fn, lib: fn.jacrev(fn.jacrev(_f_scalar, argnums=(0, 1)),
                                                       argnums=1)(*_inputs(lib, "xy")),
    "hessian": lambda fn, lib: fn.hessian(_cube_sum)(_inputs(lib, "y")),
    "hessian_argnums": lambda fn, lib: fn.hessian(_f_scalar, argnums=(0, 1))(*_inputs(lib, "xy")),
    "grad_of_jacrev_sum": lambda fn, lib: fn.grad(lambda x: fn.jacrev(lambda y: y.sin())(x)
                                                  .sum())(_inputs(lib, "y")),
}


@pytest.mark.parametrize("case", sorted(FUNC_CASES))
def test_func_matches_pytorch(case: str) -> None:
    _compare(FUNC_CASES[case](chainrule.func, chainrule), FUNC_CASES[case](torch.func, torch), case)


def test_func_results_connect_to_outer_graphs_like_pytorch() -> None:
    results = []
    for lib in LIBS:
        w = lib.tensor(Y0.copy(), requires_grad=True)
        x = _inputs(lib, "y")
        g_closure = lib.func.grad(lambda x, w=w: (x * w).sum())(x)
        g_input = lib.func.grad(lambda x: (x * x.sin()).sum())(w)
        (total,) = lib.autograd.grad((g_closure * g_input).sum(), w)
        func = lib.func
        nested = func.grad(lambda a, f=func: f.grad(lambda b: (a * b).sum())(a).sum())(x)
        results.append((g_closure, g_input, total, nested))
    _compare(results[0], results[1])


def test_func_ignores_an_outer_no_grad() -> None:
    ours_theirs = []
    for lib in LIBS:
        with lib.no_grad():
            ours_theirs.append(lib.func.grad(_cube_sum)(_inputs(lib, "y")))
    _compare(ours_theirs[0], ours_theirs[1])


FUNC_ERRORS = {
    "not_scalar": lambda fn, lib: fn.grad(lambda x: x ** 2)(_inputs(lib, "y")),
    "not_tensor": lambda fn, lib: fn.grad(lambda x: 3)(_inputs(lib, "y")),
    "aux_not_tuple": lambda fn, lib: fn.grad(_cube_sum, has_aux=True)(_inputs(lib, "y")),
    "aux_not_tensor": lambda fn, lib: fn.grad(lambda x: (x.sum(), 3.0), has_aux=True)(
        _inputs(lib, "y")
    ),
    "argnum_range": lambda fn, lib: fn.grad(_cube_sum, argnums=2)(_inputs(lib, "y")),
    "argnums_repeated": lambda fn, lib: fn.grad(_cube_sum, argnums=(0, 0))(_inputs(lib, "y")),
    "argnums_empty": lambda fn, lib: fn.grad(_cube_sum, argnums=())(_inputs(lib, "y")),
    "argnums_list": lambda fn, lib: fn.grad(_cube_sum, argnums=[0])(_inputs(lib, "y")),
    "argnum_not_tensor": lambda fn, lib: fn.grad(lambda x, n: (x * n).sum(), argnums=1)(
        _inputs(lib, "y"), 3
    ),
    "vjp_cotangent_structure": lambda fn, lib: fn.vjp(_f_pair, *_inputs(lib, "xy"))[1](
        _ones(lib, 2, 3)
    ),
    "vjp_bool_output": lambda fn, lib: fn.vjp(lambda x: x > 0, _inputs(lib, "y")),
    "vjp_number_output": lambda fn, lib: fn.vjp(lambda x: 3, _inputs(lib, "y")),
    "vjp_number_primal": lambda fn, lib: fn.vjp(lambda x: x, 3),
    "vjp_aux_not_tuple": lambda fn, lib: fn.vjp(lambda x: x, _inputs(lib, "y"), has_aux=True),
    "jacrev_chunk_size": lambda fn, lib: fn.jacrev(lambda x: x, chunk_size=0),
    "jacrev_complex": lambda fn, lib: fn.jacrev(lambda x: x)(lib.ones(2, dtype=lib.complex64)),
}


@pytest.mark.parametrize("case", sorted(FUNC_ERRORS))
def test_func_errors_match_pytorch(case: str) -> None:
    _same_error(lambda lib: FUNC_ERRORS[case](
        chainrule.func if lib is chainrule else torch.func, lib
    ))
