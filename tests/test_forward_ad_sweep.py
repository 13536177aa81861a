"""Forward-mode AD swept over the op table (issue 15): every OpInfo, in float64.

For each :class:`~tests.opinfos.OpInfo` sample, every floating input the entry differentiates is
made dual with a random tangent, in chainrule and in PyTorch (``forward_ad``), and:

* the outputs' primals and tangents equal PyTorch's (same inputs, same tangents);
* where double backward is supported, chainrule's tangents equal chainrule's own reverse-mode
  J·v (the double-backward trick: ``v ↦ grad(grad(out, x, u)·v, u)``), a check independent of
  PyTorch.

An entry whose op has no JVP rule yet must refuse with PyTorch's NotImplementedError (never a
missing or wrong tangent): those entries are listed in :data:`NO_RULE_YET` (or call an op of
:data:`PENDING_MODULES`), and the test fails when a listed one starts to work (take it off the
list) or when one not listed refuses. Complex primals and tangents are carried as PyTorch's
(tests/test_func_complex_forward.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule
import chainrule.autograd.forward_ad as cr_fwad
from chainrule.ops._forward import jvp_rule
from chainrule.ops._registry import OpDef

from .conftest import torch
from .opinfos import ALL_OPS, OpInfo
from .sweep_tools import flat_outputs, requires_grad_flags, sample_inputs, torch_from_numpy

REFUSAL = "Trying to use forward AD with"

# OpInfos whose op (or one op they call) has no JVP rule yet: chainrule refuses them, with
# PyTorch's NotImplementedError.
NO_RULE_YET: frozenset[str] = frozenset()
# Ops without a rule yet, refused wherever an entry calls them: those of the linear-algebra
# module (decompositions and legacy solvers; the module is still growing), without JVP rule.
PENDING_MODULES = ("chainrule.ops.linalg_decomp",)


def _pending_ops() -> frozenset[str]:
    import gc
    import inspect

    names = set()
    for obj in gc.get_objects():
        if type(obj) is OpDef and obj.differentiable and jvp_rule(obj) is None:
            module = inspect.getmodule(getattr(obj.forward, "__wrapped__", obj.forward))
            if module is not None and module.__name__ in PENDING_MODULES:
                names.add(obj.name)
    return frozenset(names)


PENDING_OPS = _pending_ops()

# Where reverse mode is not the Jacobian on purpose (the J·v check does not apply).
_TIES = "at ties PyTorch's forward formula takes the bound's tangent, its backward the input's"
REVERSE_NOT_JACOBIAN = {
    "embedding_scale_grad_by_freq": "the gradient is scaled by the indices' frequencies",
    "clamp_tensor_min": _TIES,
    "clamp_tensor_max": _TIES,
    "clamp_tensor_none_max": _TIES,
    "Tensor.clamp_tensor": _TIES,
    "Tensor.clip_tensor": _TIES,
    "Tensor.fmax": _TIES,
    "torch.fmax": _TIES,
    "Tensor.clamp__tensor_min": _TIES,
    "Tensor.clip__tensor_max": _TIES,
    "logsumexp_empty_dim": "PyTorch's forward formula is 0 / 0 (NaN) over an empty dimension",
    "logcumsumexp_spread": "PyTorch's forward formula adds 1e-13 to its denominator, so a "
    "prefix far below the maximum along dim gets a tangent of ~0",
    "triangular_solve": "PyTorch's triangular_solve_jvp uses A_t whole, not its triangle",
    "triangular_solve_flags": "PyTorch's triangular_solve_jvp uses A_t whole (and untransposed)",
    "Tensor.triangular_solve": "PyTorch's triangular_solve_jvp uses A_t whole, not its triangle",
}

# Where PyTorch's forward formula is wrong (it disagrees with finite differences and with its
# own reverse mode): chainrule's tangent is checked against reverse mode only.
_CHOLESKY_INVERSE = (
    "PyTorch's cholesky_inverse_jvp is off by up to 20% against finite "
    "differences; chainrule's -X (L_t L^T + L L_t^T) X agrees with them"
)
TORCH_WRONG = {"cholesky_inverse": _CHOLESKY_INVERSE, "Tensor.cholesky_inverse": _CHOLESKY_INVERSE}
_SCATTER_PROD = (
    "PyTorch's scatter_reduce_jvp gives no tangent (None) for reduce='prod'; "
    "chainrule's is the product rule, as finite differences and reverse mode"
)
TORCH_WRONG.update(
    {"scatter_reduce_prod": _SCATTER_PROD, "scatter_reduce_prod_excluding_self": _SCATTER_PROD}
)

# Where chainrule's own reverse mode is wrong (found by this J·v check; not checked there until
# fixed).
_LOGIT = (
    "chainrule's double backward of logit is NaN everywhere when an input is outside its "
    "domain (its derivative's grad * inf branch gives 0 * inf under where); PyTorch's is not"
)
REVERSE_BUG = {
    "special.logit": _LOGIT,
    "special.logit_eps": _LOGIT,
    "logit": _LOGIT,
    "Tensor.logit": _LOGIT,
}

# Where PyTorch's forward mode raises and chainrule's gives the tangent (PyTorch's own bug).
TORCH_RAISES = {
    "torch.normal_tensors": "zeros_like(mean_t) has mean's shape when mean and std broadcast: "
    "'Trying to set a forward gradient that has a different size'",
    "triangular_solve": "the cloned coefficient's tangent is A_t unbroadcast when B's batch "
    "broadcasts A: 'Trying to set a forward gradient that has a different "
    "size'",
}


def _cases() -> list[Any]:
    return [
        pytest.param(info, index, id=f"{info.name}-{index}")
        for info in ALL_OPS
        if info.grad
        for index in range(len(info.shapes))
    ]


def _tangents(arrays: list[np.ndarray], requires: list[bool]) -> list[np.ndarray | None]:
    rng = np.random.default_rng(99)
    return [
        rng.standard_normal(a.shape) if r else None for a, r in zip(arrays, requires, strict=True)
    ]


def _numpy(t: Any) -> np.ndarray:
    t = t.detach()
    # (PyTorch's zero tangents may be ZeroTensors, which it converts only when forced)
    return np.array(t.numpy(force=True) if isinstance(t, torch.Tensor) else t.numpy())


def _complex(info: OpInfo, outputs: list[tuple[np.ndarray, Any]]) -> bool:
    """Whether an entry goes through complex values (its results, or its ``extra`` says)."""
    return bool(info.extra.get("complex")) or any(p.dtype.kind == "c" for p, _ in outputs)


def _forward(
    lib: Any, fwad: Any, info: OpInfo, arrays: list[np.ndarray], tangents: list[np.ndarray | None]
) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """The primals and tangents of ``info``'s outputs under a dual level of ``lib``."""
    make = torch_from_numpy if lib is torch else (lambda a: lib.from_numpy(a.copy()))
    with fwad.dual_level():
        args = []
        for a, t in zip(arrays, tangents, strict=True):
            x = make(a)
            args.append(x if t is None else fwad.make_dual(x, make(t)))
        outs = flat_outputs(info.fn(lib, *args))
        result = []
        for o in outs:
            primal, tangent = fwad.unpack_dual(o)
            result.append((_numpy(primal), None if tangent is None else _numpy(tangent)))
        return result


def _reverse_jvp(
    info: OpInfo, arrays: list[np.ndarray], requires: list[bool], tangents: list[np.ndarray | None]
) -> list[np.ndarray | None]:
    """J·v by chainrule's reverse mode: ``grad(out, x, u)`` is linear in ``u``; differentiating
    ``<grad(out, x, u), v>`` with respect to ``u`` gives J·v."""
    xs = [
        chainrule.from_numpy(a.copy()).requires_grad_(r)
        for a, r in zip(arrays, requires, strict=True)
    ]
    outs = flat_outputs(info.fn(chainrule, *xs))
    wanted = [x for x, r in zip(xs, requires, strict=True) if r]
    vs = [chainrule.from_numpy(t.copy()) for t in tangents if t is not None]
    result: list[np.ndarray | None] = []
    for o in outs:
        if not o.requires_grad or not o.dtype.is_floating_point:
            result.append(None)
            continue
        # (any u: grad(out, x, u) is linear in u; not zeros, which some backward formulas
        # take as "no gradient" and skip)
        u = chainrule.from_numpy(np.random.default_rng(5).standard_normal(o.shape)).requires_grad_()
        gs = chainrule.autograd.grad(o, wanted, u, create_graph=True, allow_unused=True)
        terms = [
            (g * v).sum() for g, v in zip(gs, vs, strict=True) if g is not None and g.requires_grad
        ]
        if not terms:
            result.append(np.zeros(o.shape))
            continue
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        (jv,) = chainrule.autograd.grad(total, u, allow_unused=True)
        result.append(np.zeros(o.shape) if jv is None else jv.numpy())
    return result


@pytest.mark.parametrize(("info", "index"), _cases())
def test_jvp_matches_torch(info: OpInfo, index: int) -> None:
    arrays = sample_inputs(info, index, "float64", seed=3)
    requires = requires_grad_flags(info, arrays)
    if not any(requires):
        requires = [False] * len(arrays)
    tangents = _tangents(arrays, requires)
    try:
        ours = _forward(chainrule, cr_fwad, info, arrays, tangents)
    except NotImplementedError as error:
        if not str(error).startswith(REFUSAL):
            raise
        refused_op = str(error)[len(REFUSAL) :].split()[0]
        listed = info.name in NO_RULE_YET or refused_op in PENDING_OPS
        try:
            theirs = _forward(torch, torch.autograd.forward_ad, info, arrays, tangents)
        except NotImplementedError as e:  # PyTorch has no forward derivative either
            assert str(error) == str(e)
            return
        except RuntimeError:  # (PyTorch fails otherwise: a listed refusal is no worse)
            assert listed, f"{info.name}: refused but not in NO_RULE_YET ({error})"
            return
        if _complex(info, theirs):
            return  # (complex tangents are refused as a whole: complex forward mode is to come)
        assert listed, f"{info.name}: refused but not in NO_RULE_YET ({error})"
        return
    assert info.name not in NO_RULE_YET, f"{info.name} works: take it off NO_RULE_YET"
    if info.name in TORCH_RAISES and index > 0:
        with pytest.raises(RuntimeError, match="different size"):
            _forward(torch, torch.autograd.forward_ad, info, arrays, tangents)
        return
    theirs = _forward(torch, torch.autograd.forward_ad, info, arrays, tangents)
    assert len(ours) == len(theirs)
    for i, ((p, t), (tp, tt)) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(
            p, tp, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=f"{info.name} primal {i}"
        )
        if info.name in TORCH_WRONG:
            continue  # (checked against reverse mode below)
        if tt is None or not np.any(tt):
            # (PyTorch leaves some tangents undefined where chainrule has zeros, or the other
            # way round: both mean zero)
            assert t is None or not np.any(t), f"{info.name} tangent {i}: {t} vs None"
            continue
        assert t is not None, f"{info.name} tangent {i} missing"
        assert t.shape == tt.shape and t.dtype == tt.dtype, f"{info.name} tangent {i} shape/dtype"
        np.testing.assert_allclose(
            t, tt, rtol=1e-9, atol=1e-9, equal_nan=True, err_msg=f"{info.name} tangent {i}"
        )
    if (
        not info.second_order
        or not any(requires)
        or info.name in REVERSE_NOT_JACOBIAN
        or info.name in REVERSE_BUG
    ):
        return
    reverse = _reverse_jvp(info, arrays, requires, tangents)
    for i, ((_, t), r) in enumerate(zip(ours, reverse, strict=True)):
        if r is None:
            continue
        got = np.zeros_like(r) if t is None else t
        np.testing.assert_allclose(
            got,
            r,
            rtol=1e-9,
            atol=1e-9,
            equal_nan=True,
            err_msg=f"{info.name} tangent {i} vs reverse mode",
        )


SPECIAL = (0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, 1e-30, 3.0, 3.0)


def _special_inputs(info: OpInfo, index: int) -> list[np.ndarray]:
    """The sample's inputs filled with SPECIAL, cycled with a phase per input so that binary
    ops meet every pair (as tests/test_op_sweep_special_values.py does)."""
    arrays = []
    for k, shape in enumerate(info.shapes[index]):
        n = int(np.prod(shape)) if shape else 1
        values = [SPECIAL[(i + 5 * k + i * k) % len(SPECIAL)] for i in range(n)]
        arrays.append(np.array(values, dtype=np.float64).reshape(shape))
    return arrays


#: Entries whose special values do not give PyTorch's results yet (strict xfails).
SPECIAL_KNOWN: dict[str, str] = {}


def _special_cases() -> list[Any]:
    cases = []
    for info in ALL_OPS:
        if not info.grad or info.make_inputs is not None or info.name in NO_RULE_YET:
            continue
        for index in range(len(info.shapes)):
            key = next((k for k in (f"{info.name}-{index}", info.name) if k in SPECIAL_KNOWN), None)
            marks = (
                [pytest.mark.xfail(strict=True, reason=SPECIAL_KNOWN[key])]
                if key is not None
                else []
            )
            cases.append(pytest.param(info, index, id=f"{info.name}-{index}", marks=marks))
    return cases


@pytest.mark.parametrize(("info", "index"), _special_cases())
def test_jvp_at_special_values(info: OpInfo, index: int) -> None:
    """0, -0, ±inf, NaN, ties and x = y: tangents equal PyTorch's, NaN where it has NaN; where
    PyTorch raises, chainrule raises the same type."""
    arrays = _special_inputs(info, index)
    requires = requires_grad_flags(info, arrays)
    tangents = _tangents(arrays, requires)
    try:
        theirs = _forward(torch, torch.autograd.forward_ad, info, arrays, tangents)
    except Exception as error:  # noqa: BLE001 - any error of PyTorch's: ours must be the same
        with pytest.raises(type(error)):
            _forward(chainrule, cr_fwad, info, arrays, tangents)
        return
    try:
        ours = _forward(chainrule, cr_fwad, info, arrays, tangents)
    except NotImplementedError as error:  # (an op without a rule yet: checked above)
        refused_op = str(error)[len(REFUSAL) :].split()[0]
        if refused_op not in PENDING_OPS and not _complex(info, theirs):
            raise
        return
    assert len(ours) == len(theirs)
    for i, ((p, t), (tp, tt)) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(
            p, tp, rtol=1e-12, atol=0, equal_nan=True, err_msg=f"{info.name} primal {i}"
        )
        if info.name in TORCH_WRONG:
            continue  # (PyTorch's tangent is the wrong one to compare with)
        if tt is None or not np.any(tt):
            assert t is None or not np.any(t), f"{info.name} tangent {i}: {t} vs zeros"
            continue
        assert t is not None, f"{info.name} tangent {i} missing"
        np.testing.assert_allclose(
            t, tt, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=f"{info.name} tangent {i}"
        )


LOW_PRECISION = {"float32": (1e-4, 1e-5), "float16": (2e-2, 2e-3)}


LOW_PRECISION_KNOWN: dict[str, str] = {}
_EXP = "PyTorch's float16 matrix_exp of the doubled block matrix [[A, A_t], [0, A]] is NaN"
LOW_PRECISION_KNOWN.update(
    {
        f"{name}-{k}-float16": _EXP
        for name, count in (
            ("linalg.matrix_exp", 3),
            ("linalg.matrix_exp_large", 1),
            ("matrix_exp", 1),
            ("Tensor.matrix_exp", 1),
        )
        for k in range(count)
    }
)
_FREXP = (
    "PyTorch's frexp tangent of a float16 input is float32 (its self_t / exponent.exp2() "
    "is not cast back); chainrule's tangents keep the primal's dtype"
)
LOW_PRECISION_KNOWN.update(
    {"frexp-0-float16": _FREXP, "frexp-1-float16": _FREXP, "Tensor.frexp-0-float16": _FREXP}
)
_RENORM = (
    "PyTorch's renorm tangent of a float16 input is float32 (renorm_jvp's norm is taken "
    "in the accumulation type and not cast back); chainrule's tangents keep the primal's "
    "dtype"
)
LOW_PRECISION_KNOWN.update(
    {
        f"{name}-{k}-float16": _RENORM
        for name, count in (
            ("renorm_p1.0", 2),
            ("renorm_p2.0", 2),
            ("renorm_p3.0", 2),
            ("renorm_p0.5", 2),
            ("renorm_pinf", 1),
            ("renorm_last_dim", 1),
            ("renorm_all_below", 1),
        )
        for k in range(count)
    }
)


def _low_precision_cases() -> list[Any]:
    cases = []
    for info in ALL_OPS:
        if not info.grad or info.name in NO_RULE_YET:
            continue
        for index in range(len(info.shapes)):
            for dtype in LOW_PRECISION:
                key = f"{info.name}-{index}-{dtype}"
                marks = (
                    [pytest.mark.xfail(strict=True, reason=LOW_PRECISION_KNOWN[key])]
                    if key in LOW_PRECISION_KNOWN
                    else []
                )
                cases.append(pytest.param(info, index, dtype, id=key, marks=marks))
    return cases


@pytest.mark.parametrize(("info", "index", "dtype"), _low_precision_cases())
def test_jvp_in_float32_and_float16(info: OpInfo, index: int, dtype: str) -> None:
    """Tangents in the inputs' dtype (float32, float16), as PyTorch's: same dtype, values
    within the precision (each op of a rule rounds as PyTorch's formula's ops do)."""
    arrays = sample_inputs(info, index, dtype, seed=3)
    requires = requires_grad_flags(info, arrays)
    tangents = [None if t is None else t.astype(dtype) for t in _tangents(arrays, requires)]
    if info.name in TORCH_RAISES and index > 0:
        return  # (PyTorch's own error: test_jvp_matches_torch)
    try:
        theirs = _forward(torch, torch.autograd.forward_ad, info, arrays, tangents)
    except Exception as error:  # noqa: BLE001 - (PyTorch refuses this dtype: so must we)
        with pytest.raises(Exception) as caught:  # noqa: PT011
            _forward(chainrule, cr_fwad, info, arrays, tangents)
        if "no complex32" in str(caught.value):
            return  # (complex halves: chainrule refuses the dtype itself, PyTorch its kernel)
        assert isinstance(caught.value, type(error)), repr(caught.value)
        ours = str(caught.value)
        if ("forward AD" in str(error) or "jvp" in str(error)) and not (
            # (for an op PyTorch has no forward formula for, PyTorch refuses forward mode
            # before its kernel refuses the half dtype; chainrule's kernel refuses first)
            str(error).startswith(REFUSAL) and "not implemented for 'Half'" in ours
        ):
            assert ours == str(error)  # (forward mode's own refusal: its words)
        return
    try:
        ours = _forward(chainrule, cr_fwad, info, arrays, tangents)
    except NotImplementedError as error:  # (refused in float64 too: the sweep above)
        refused_op = str(error)[len(REFUSAL) :].split()[0]
        assert refused_op in PENDING_OPS or _complex(info, theirs), str(error)
        return
    except RuntimeError as error:  # (complex halves: a dtype chainrule does not have)
        if "no complex32" not in str(error):
            raise
        pytest.xfail(str(error))
    rtol, atol = LOW_PRECISION[dtype]
    for i, ((p, t), (tp, tt)) in enumerate(zip(ours, theirs, strict=True)):
        assert p.dtype == tp.dtype, f"{info.name} primal {i} dtype"
        if info.name in TORCH_WRONG:
            continue
        if tt is None or not np.any(tt):
            assert t is None or not np.any(t), f"{info.name} tangent {i}"
            continue
        assert t is not None and t.dtype == tt.dtype, f"{info.name} tangent {i} dtype"
        scale = max(1.0, float(np.nanmax(np.abs(tt[np.isfinite(tt)]), initial=0.0)))
        np.testing.assert_allclose(
            t.astype(np.float64),
            tt.astype(np.float64),
            rtol=rtol,
            atol=atol * scale,
            equal_nan=True,
            err_msg=f"{info.name} tangent {i}",
        )
