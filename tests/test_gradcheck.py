"""``gradcheck``/``gradgradcheck`` pass and fail like PyTorch's; ``check_graph`` names the node
whose derivative is wrong."""

from __future__ import annotations

import importlib
import re
import warnings
from typing import Any

import numpy as np
import pytest

import chainrule
from chainrule.autograd.gradcheck import GradcheckError, check_graph
from chainrule.ops._registry import FLOAT, op

from .conftest import normalise_output, torch
from .opinfos import ALL_OPS
from .sweep_tools import flat_outputs, requires_grad_flags, sample_inputs

LIBS = (chainrule, torch)


def _outcome(fn) -> tuple[str, str]:
    """``("ok", repr(result))`` or ``(exception type, message)``, warnings ignored."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", repr(fn())
        except Exception as error:  # noqa: BLE001 - compared with PyTorch's
            return type(error).__name__, normalise_output(str(error))


def _round_numbers(text: str) -> str:
    """Floats printed at full precision rounded to 8 significant digits (the last bits of a
    dot product depend on the summation order)."""
    return re.sub(
        r"-?\d+\.\d{9,}(e-?\d+)?", lambda m: f"{float(m.group()):.8g}", text
    )


def _same(make, round_numbers: bool = False) -> tuple[str, str]:
    ours = _outcome(lambda: make(chainrule))
    theirs = _outcome(lambda: make(torch))
    if round_numbers:
        ours = (ours[0], _round_numbers(ours[1]))
        theirs = (theirs[0], _round_numbers(theirs[1]))
    assert ours == theirs
    return ours


def _y(lib):
    return lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)


def _xy(lib):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    y = lib.tensor(rng.standard_normal(3), requires_grad=True)
    return x, y


def _function(lib, name: str, forward, backward) -> Any:
    return type(name, (lib.autograd.Function,), {
        "forward": staticmethod(forward), "backward": staticmethod(backward),
    })


def _wrong_square(lib):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 2

    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a * 3  # should be 2

    return _function(lib, "WrongSquare", forward, backward)


def _wrong_second_derivative(lib):
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 3

    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * 3 * a.detach() ** 2  # right value, but not differentiable in a

    return _function(lib, "WrongSecond", forward, backward)


# ----------------------------------------------------------------------------------------------
# Passing


@pytest.mark.parametrize("fast_mode", [False, True])
def test_correct_functions_pass(fast_mode: bool) -> None:
    for make in (
        lambda lib: lib.autograd.gradcheck(lambda a, b: (a * b).exp(), _xy(lib),
                                           fast_mode=fast_mode),
        lambda lib: lib.autograd.gradcheck(lambda a, b: (a * b, a.sum() * b), _xy(lib),
                                           fast_mode=fast_mode),
        lambda lib: lib.autograd.gradcheck(lambda a, i: a * i, (_y(lib), lib.tensor([1, 2, 3])),
                                           fast_mode=fast_mode),
        lambda lib: lib.autograd.gradcheck(lambda a: (a * 2, (a > 0).long()), (_y(lib),),
                                           fast_mode=fast_mode),
        lambda lib: lib.autograd.gradgradcheck(lambda a: a.sin() * a, (_y(lib),),
                                               fast_mode=fast_mode),
        lambda lib: lib.autograd.gradgradcheck(
            lambda a, b: (a * b).tanh(), _xy(lib), fast_mode=fast_mode
        ),
    ):
        assert _same(make) == ("ok", "True")


def _sample(every: int, offset: int) -> list[Any]:
    infos = [i for i in ALL_OPS if i.grad and i.gradcheck]
    return [
        pytest.param(info, k, id=f"{info.name}-{k}")
        for info in infos[offset::every] for k in range(len(info.shapes))
    ]


def _op_inputs(info: Any, index: int) -> tuple[tuple, Any]:
    arrays = sample_inputs(info, index, "float64", seed=1)
    requires = requires_grad_flags(info, arrays)
    xs = tuple(
        chainrule.from_numpy(a.copy()).requires_grad_(r) if r else chainrule.from_numpy(a.copy())
        for a, r in zip(arrays, requires, strict=True)
    )

    def fn(*args: Any) -> tuple:
        return tuple(
            o for o in flat_outputs(info.fn(chainrule, *args)) if o.dtype.is_floating_point
        )

    return xs, fn


@pytest.mark.parametrize(("info", "index"), _sample(3, 0))
def test_op_table_sample_passes_gradcheck(info: Any, index: int) -> None:
    xs, fn = _op_inputs(info, index)
    if not any(x.requires_grad for x in xs):
        return
    assert chainrule.autograd.gradcheck(fn, xs)


@pytest.mark.parametrize(("info", "index"), _sample(3, 1))
def test_op_table_sample_passes_fast_gradcheck(info: Any, index: int) -> None:
    xs, fn = _op_inputs(info, index)
    if not any(x.requires_grad for x in xs):
        return
    if not all(np.isfinite(o.detach().numpy()).all() for o in fn(*xs)):
        return  # e.g. logsumexp over an empty dim (-inf): PyTorch's fast mode fails there too
    assert chainrule.autograd.gradcheck(fn, xs, fast_mode=True)


# NativeBatchNormBackward0 (training) and NativeLayerNormBackward0 differentiate through the
# statistics while their forwards take them as arguments (PyTorch's saved outputs result1 and
# result2), so re-running a forward alone cannot agree (reported).
# NormalBackward1/2/3 are zero by PyTorch's definition (sampling is not differentiated), while
# re-running the sampler with a perturbed mean or std moves the sample.
# LinalgEighBackward0, LinalgCholeskyExBackward0 and CholeskyBackward0 read one triangle of A
# while PyTorch's gradient is the symmetric one (the entries use symmetric inputs, where the
# two agree; node by node, perturbing one entry cannot).
# CtcLossBackward0 returns PyTorch's exp(log_probs) - posterior, the gradient in the logits of
# a log_softmax folded in, not the derivative in log_probs (the OpInfos go through log_softmax,
# where the two agree; tests/test_ctc_loss.py checks the exact part by finite differences).
_SELF_INCONSISTENT = {"NativeBatchNormBackward0", "NativeLayerNormBackward0",
                      "NormalBackward1", "NormalBackward2", "NormalBackward3",
                      "LinalgEighBackward0", "LinalgCholeskyExBackward0", "CholeskyBackward0",
                      "CtcLossBackward0"}


# Nodes of one op that finite differences cannot check node by node: corrcoef clamps its result
# to [-1, 1] and its diagonal is 1 (to rounding) whatever the input, a kink the differences
# straddle; svd with full_matrices=True returns extra singular vectors A does not determine
# (the OpInfo checks gauge-invariant functions of them, as PyTorch's own svd gradcheck does).
_AT_A_KINK = {("corrcoef", "ClampBackward1"), ("Tensor.corrcoef", "ClampBackward1"),
              ("svd_complete", "LinalgSvdBackward0")}


@pytest.mark.parametrize(("info", "index"), _sample(2, 0))
def test_op_table_sample_passes_check_graph(info: Any, index: int) -> None:
    xs, fn = _op_inputs(info, index)
    outputs = [o for o in fn(*xs) if o.requires_grad]
    if not outputs:
        return
    report = check_graph(outputs, raise_exception=False)
    for check in report.checks:
        if check.name not in _SELF_INCONSISTENT and (info.name, check.name) not in _AT_A_KINK:
            assert check.status != "mismatch", str(check)


# ----------------------------------------------------------------------------------------------
# Failing with PyTorch's messages


def test_wrong_custom_function_fails_with_pytorchs_message() -> None:
    kind, message = _same(lambda lib: lib.autograd.gradcheck(_wrong_square(lib).apply, _y(lib)))
    assert kind == "GradcheckError"
    assert message.startswith(
        "Jacobian mismatch for output 0 with respect to input 0,\nnumerical:tensor([[ 1.0000,"
    )
    assert "\nanalytical:tensor([[ 1.5000," in message
    _same(lambda lib: lib.autograd.gradcheck(
        lambda a, b: _wrong_square(lib).apply(a) * b, _xy(lib)
    ))


def test_wrong_custom_function_fails_in_fast_mode() -> None:
    kind, message = _same(
        lambda lib: lib.autograd.gradcheck(_wrong_square(lib).apply, _y(lib), fast_mode=True),
        round_numbers=True,
    )
    assert kind == "GradcheckError"
    assert "Below, we recompute numerical and analytical jacobians in slow mode" in message
    _same(
        lambda lib: lib.autograd.gradcheck(
            lambda a, b: _wrong_square(lib).apply(a) * b, _xy(lib), fast_mode=True
        ),
        round_numbers=True,
    )


def test_raise_exception_false_returns_false() -> None:
    for lib in LIBS:
        assert lib.autograd.gradcheck(_wrong_square(lib).apply, _y(lib),
                                      raise_exception=False) is False
        assert lib.autograd.gradgradcheck(
            _wrong_second_derivative(lib).apply, _y(lib), raise_exception=False
        ) is False


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradgradcheck_catches_a_wrong_second_derivative(fast_mode: bool) -> None:
    def make(lib):
        grad_out = lib.ones(3, dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradgradcheck(
            _wrong_second_derivative(lib).apply, _y(lib), (grad_out,), fast_mode=fast_mode
        )

    kind, message = _same(make, round_numbers=True)
    assert kind == "GradcheckError"
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,")


def _ignores_grad_output(lib):
    return _function(lib, "IgnoresGrad", lambda ctx, a: a * 2,
                     lambda ctx, g: lib.ones_like(g) * 2)


def _constant_gradient(lib):
    # Right derivative for sum(2 a), but the backward ignores how big grad_output is.
    return _function(lib, "ConstantGrad", lambda ctx, a: (a * 2).sum(),
                     lambda ctx, g: lib.ones(3, dtype=lib.float64) * 2)


def _two_outputs(lib, handles_none: bool):
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        return a * 2, a * 3

    def backward(ctx, g1, g2):
        if handles_none and g1 is None:
            return g2 * 3 + 1  # wrong when g1 is undefined
        if handles_none and g2 is None:
            return g1 * 2
        return g1 * 2 + g2 * 3

    return _function(lib, "TwoOutputs", forward, backward)


def _wrong_without_one_gradient(lib):
    """Right Jacobians, but a nonzero gradient when one output gets none and the other zeros:
    only the undefined-gradient check catches it."""
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        return a * 2, a * 3

    def backward(ctx, g1, g2):
        if g1 is None and g2 is None:
            return None
        if g1 is None:
            return g2 * 3 + bool((g2 == 0).all())
        if g2 is None:
            return g1 * 2
        return g1 * 2 + g2 * 3

    return _function(lib, "OneUndefined", forward, backward)


def _noisy(lib):
    rng = np.random.default_rng(0)
    return _function(
        lib, "Noisy", lambda ctx, a: a * 2,
        lambda ctx, g: g * 2 + lib.tensor(rng.standard_normal(tuple(g.shape)) * 1e-9),
    )


ERRORS = {
    "no_input_requires_grad": lambda lib: lib.autograd.gradcheck(
        lambda a: a * 2, (_y(lib).detach(),)),
    "stride_zero": lambda lib: lib.autograd.gradcheck(
        lambda a: a * 2,
        (lib.tensor([1.0], dtype=lib.float64).expand(3).requires_grad_(),)),
    "ignores_grad_output": lambda lib: lib.autograd.gradcheck(
        _ignores_grad_output(lib).apply, (_y(lib),)),
    "ignores_grad_output_fast": lambda lib: lib.autograd.gradcheck(
        _ignores_grad_output(lib).apply, (_y(lib),), fast_mode=True),
    "backward_not_multiplied": lambda lib: lib.autograd.gradcheck(
        _constant_gradient(lib).apply, (_y(lib),)),
    "no_differentiable_output": lambda lib: lib.autograd.gradcheck(
        lambda a: a.detach() * 2, (_y(lib),)),
    "no_differentiable_output_fast": lambda lib: lib.autograd.gradcheck(
        lambda a: a.detach() * 2, (_y(lib),), fast_mode=True),
    "no_differentiable_output_zero": lambda lib: lib.autograd.gradcheck(
        lambda a: a.detach() * 0, (_y(lib),)),
    "undefined_grad_crash": lambda lib: lib.autograd.gradcheck(
        _two_outputs(lib, False).apply, (_y(lib),)),
    "undefined_grad_wrong": lambda lib: lib.autograd.gradcheck(
        _two_outputs(lib, True).apply, (_y(lib),)),
    "undefined_grad_check": lambda lib: lib.autograd.gradcheck(
        _wrong_without_one_gradient(lib).apply, (_y(lib),)),
    "undefined_grad_check_off": lambda lib: lib.autograd.gradcheck(
        _wrong_without_one_gradient(lib).apply, (_y(lib),), check_undefined_grad=False),
    "not_reentrant": lambda lib: lib.autograd.gradcheck(_noisy(lib).apply, (_y(lib),)),
    "not_reentrant_fast": lambda lib: lib.autograd.gradcheck(
        _noisy(lib).apply, (_y(lib),), fast_mode=True),
    "nondet_tol": lambda lib: lib.autograd.gradcheck(
        _noisy(lib).apply, (_y(lib),), nondet_tol=1e-6),
    "float32": lambda lib: lib.autograd.gradcheck(
        lambda a: a * 2, (_y(lib).detach().float().requires_grad_(),), atol=1e-2, rtol=1e-2),
    "no_backward_check": lambda lib: lib.autograd.gradcheck(
        lambda a: a, (_y(lib),), check_backward_ad=False),
    "gradgrad_flags": lambda lib: lib.autograd.gradgradcheck(
        lambda a: a, (_y(lib),), check_rev_over_rev=False),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_failures_match_pytorch(case: str) -> None:
    _same(ERRORS[case], round_numbers=True)


def test_float32_input_warns_like_pytorch() -> None:
    messages = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.autograd.gradcheck(lambda a: a * 2, (_y(lib).detach().float().requires_grad_(),),
                                   raise_exception=False)
        messages.append([str(w.message) for w in caught if "double precision" in str(w.message)])
    assert messages[0] == messages[1] and len(messages[0]) == 1


def test_complex_input_numerical_jacobian_is_pytorchs_gradient() -> None:
    """The Wirtinger finite differences for a complex input equal PyTorch's gradient."""
    from chainrule.autograd.gradcheck import _numerical_jacobian

    values = np.array([1 + 2j, 3 - 1j])
    x = chainrule.tensor(values)  # (complex tensors cannot require grad in chainrule)
    out = (x * x).abs()
    numerical = _numerical_jacobian(lambda t: (t * t).abs(), (x,), (out,), 0, 1e-6)[0]
    t = torch.tensor(values, requires_grad=True)
    (t * t).abs().sum().backward()
    np.testing.assert_allclose(numerical.sum(axis=1), t.grad.numpy(), rtol=1e-6)


def test_check_forward_ad_runs_forward_mode() -> None:
    # (forward-mode checks against PyTorch: tests/test_gradcheck_forward_ad.py)
    for lib in (chainrule, torch):
        assert lib.autograd.gradcheck(lambda a: a * a, (_y(lib),), check_forward_ad=True)


def test_gradcheck_is_the_function_even_after_importing_the_module() -> None:
    # (``import chainrule.autograd.gradcheck as m`` binds the function once the attribute has
    # been read, as PyTorch's does; the module itself is in sys.modules)
    module = importlib.import_module("chainrule.autograd.gradcheck")
    import chainrule.autograd.gradcheck as bound

    assert bound is chainrule.autograd.gradcheck or bound is module
    assert module.gradcheck(lambda a: a * 3, (_y(chainrule),))
    assert chainrule.autograd.gradcheck(lambda a: a * 3, (_y(chainrule),))
    assert chainrule.autograd.gradgradcheck(lambda a: a ** 3, (_y(chainrule),))


def _scalar(lib):
    return lib.tensor(1.5, dtype=lib.float64, requires_grad=True)


def _wrong_cube(lib):
    """Right first derivative, second derivative off (``a`` detached in backward)."""
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 3

    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * 3 * a.detach() * a

    return _function(lib, "WrongCube", forward, backward)


# 0-d inputs and outputs, several outputs, and non-default options: each must give the result
# PyTorch gives (gradgradcheck drew its random grad_outputs with ``rand(*shape)``, which for a
# 0-d output is ``rand()`` without a size).
ZERO_DIM_AND_OPTIONS = {
    "gc_0d": lambda lib: lib.autograd.gradcheck(lambda a: a * a, (_scalar(lib),)),
    "ggc_0d": lambda lib: lib.autograd.gradgradcheck(lambda a: a * a * a, (_scalar(lib),)),
    "ggc_0d_out": lambda lib: lib.autograd.gradgradcheck(lambda a: (a ** 3).sum(), (_y(lib),)),
    "ggc_0d_in": lambda lib: lib.autograd.gradgradcheck(
        lambda a: a * a * lib.tensor([1.0, 2.0], dtype=lib.float64), (_scalar(lib),)),
    "ggc_multi_out": lambda lib: lib.autograd.gradgradcheck(
        lambda a: (a * a * a, a.sum() ** 2), (_y(lib),)),
    "ggc_multi_out_0d": lambda lib: lib.autograd.gradgradcheck(
        lambda a: (a * a * a, a.exp()), (_scalar(lib),)),
    "ggc_fast_0d": lambda lib: lib.autograd.gradgradcheck(
        lambda a: a * a * a, (_scalar(lib),), fast_mode=True),
    "ggc_fast_multi": lambda lib: lib.autograd.gradgradcheck(
        lambda a: (a * a * a, a.sum() ** 2), (_y(lib),), fast_mode=True),
    "ggc_non_contig_0d": lambda lib: lib.autograd.gradgradcheck(
        lambda a: a * a * a, (_scalar(lib),), gen_non_contig_grad_outputs=True),
    "ggc_non_contig": lambda lib: lib.autograd.gradgradcheck(
        lambda a: a * a * a, (_y(lib),), gen_non_contig_grad_outputs=True),
    "ggc_grad_outputs_0d": lambda lib: lib.autograd.gradgradcheck(
        lambda a: a * a * a, (_scalar(lib),), (lib.tensor(2.0, dtype=lib.float64),)),
    "ggc_0d_two_inputs": lambda lib: lib.autograd.gradgradcheck(
        lambda a, b: a * b * a, (_scalar(lib), _y(lib))),
    "ggc_wrong_0d": lambda lib: lib.autograd.gradgradcheck(
        _wrong_cube(lib).apply, (_scalar(lib),), raise_exception=False),
    "ggc_wrong_0d_raises": lambda lib: lib.autograd.gradgradcheck(
        _wrong_cube(lib).apply, (_scalar(lib),), (lib.tensor(2.0, dtype=lib.float64),)),
    "gc_0d_options": lambda lib: lib.autograd.gradcheck(
        lambda a: a.sin(), (_scalar(lib),), eps=1e-4, atol=1e-3, rtol=1e-2, nondet_tol=1e-7,
        check_undefined_grad=False, check_batched_grad=True),
    "gc_empty": lambda lib: lib.autograd.gradgradcheck(
        lambda a: a * a, (lib.zeros(0, dtype=lib.float64, requires_grad=True),)),
}


@pytest.mark.parametrize("case", sorted(ZERO_DIM_AND_OPTIONS))
def test_zero_dim_multiple_outputs_and_options_match_pytorch(case: str) -> None:
    _same(ZERO_DIM_AND_OPTIONS[case], round_numbers=True)


# ----------------------------------------------------------------------------------------------
# check_graph


@op("BadExpBackward0", promote=FLOAT)
def bad_exp(self):
    """exp, with a derivative that is 1% off."""
    return np.exp(self)


@bad_exp.derivative("self")
def _(ops, grad, result):
    return grad * result * 1.01


def test_check_graph_passes_a_correct_graph() -> None:
    x = chainrule.tensor([0.5, 1.5, -0.3], requires_grad=True)
    w = chainrule.randn(3, 2, requires_grad=True)
    c = chainrule.tensor([1.0, 2.0, 3.0])
    y = ((x * 2 + c).sin() @ w).tanh().sum()
    report = check_graph(y)
    assert report
    assert [check.status for check in report.checks] == ["ok"] * len(report.checks)
    assert [check.name for check in report.checks] == [
        "SumBackward0", "TanhBackward0", "SqueezeBackward4", "MmBackward0",
        "UnsqueezeBackward0", "SinBackward0", "AddBackward0", "MulBackward0",
    ]


def test_check_graph_names_the_wrong_node() -> None:
    x = chainrule.tensor([0.5, 1.5, -0.3], dtype=chainrule.float64, requires_grad=True)
    y = (bad_exp(x * 2) * x).pow(2).mean()
    with pytest.raises(GradcheckError) as info:
        check_graph(y)
    message = str(info.value)
    assert message.startswith(
        "check_graph: the first node whose derivative disagrees is node 3 (BadExpBackward0): the "
        "derivative for input 0 ('self') disagrees with finite differences,\nnumerical:tensor("
    )
    report = check_graph(y, raise_exception=False)
    assert not report
    failure = report.first_failure
    assert failure is not None and failure.name == "BadExpBackward0"
    np.testing.assert_allclose(failure.analytical, failure.numerical * 1.01, rtol=1e-6)
    assert [c.status for c in report.checks] == ["ok", "ok", "ok", "mismatch", "ok"]


def test_check_graph_in_float32_and_through_nn_layers() -> None:
    chainrule.manual_seed(0)
    layer = chainrule.nn.Linear(3, 4)
    out = chainrule.nn.functional.relu(layer(chainrule.randn(5, 3))).log_softmax(-1).sum()
    report = check_graph(out)
    assert [c.name for c in report.checked] == [
        "SumBackward0", "LogSoftmaxBackward0", "ReluBackward0", "AddmmBackward0", "TBackward0",
    ]


def test_check_graph_reports_what_it_cannot_check() -> None:
    double = _function(chainrule, "Double", lambda ctx, a: a * 2, lambda ctx, g: g * 2)
    x = chainrule.tensor([0.5, 1.5], dtype=chainrule.float64, requires_grad=True)
    c = chainrule.tensor([1.0, 2.0], dtype=chainrule.float64) * 3
    y = (bad_exp(x - c) * double.apply(x)).sum()
    report = check_graph(y, raise_exception=False)
    statuses = {check.name: (check.status, check.reason) for check in report.checks}
    assert statuses["DoubleBackward"] == ("unchecked", "a custom Function (use gradcheck on it)")
    assert statuses["BadExpBackward0"] == (
        "unchecked", "its argument 'self' was not saved and is not known otherwise"
    )
    assert statuses["SubBackward0"][0] == "ok"  # the constant is replaced by a stand-in

    z = (x.exp() * x).sum()
    z.backward()
    reasons = [check.reason for check in check_graph(z).checks if check.status == "unchecked"]
    assert reasons == ["its saved values were freed by a backward pass (use retain_graph=True)"] * 2


def test_check_graph_restricted_to_inputs() -> None:
    a = chainrule.tensor([0.5, 1.5], dtype=chainrule.float64, requires_grad=True)
    b = chainrule.tensor([2.0, 3.0], dtype=chainrule.float64, requires_grad=True)
    y = (a.exp() + b.sin()).sum()
    names = [check.name for check in check_graph(y, inputs=[a]).checks]
    assert names == ["SumBackward0", "AddBackward0", "ExpBackward0"]


def test_check_graph_walks_a_deep_chain_without_recursion() -> None:
    x = chainrule.tensor([0.3], dtype=chainrule.float64, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0001
    report = check_graph(y.sum())
    assert len(report.checks) == 3001 and report


@op("BadSumBackward0", promote=FLOAT)
def bad_square(self):
    """self ** 2, with a derivative of the wrong shape."""
    return self * self


@bad_square.derivative("self")
def _(ops, grad, self):
    return ops.sum(2 * self * grad, (0,), False)


def test_check_graph_reports_a_gradient_of_the_wrong_shape() -> None:
    x = chainrule.tensor([[0.5, 1.5], [2.0, 3.0]], dtype=chainrule.float64, requires_grad=True)
    report = check_graph(bad_square(x).sum(), raise_exception=False)
    failure = report.first_failure
    assert failure is not None and str(failure) == (
        "node 1 (BadSumBackward0): the derivative for input 0 ('self') has shape [2], expected "
        "[2, 2]"
    )


def test_complex_tensors_require_grad_but_ops_off_the_allowlist_refuse() -> None:
    """No silently wrong complex gradients: an op whose complex derivative is not on the
    allowlist refuses to record (tests/test_complex_refused.py)."""
    z = chainrule.tensor([1 + 2j], requires_grad=True)
    assert chainrule.tensor([1 + 2j]).requires_grad_().requires_grad
    with pytest.raises(RuntimeError, match="does not differentiate complex tensors"):
        z.view(1, 1).renorm(2, 0, 1)


def test_check_graph_is_exported_from_autograd() -> None:
    assert chainrule.autograd.check_graph is check_graph
    x = chainrule.tensor([1.0, 2.0], dtype=chainrule.float64, requires_grad=True)
    report = chainrule.autograd.check_graph((x.exp() * x).sum())
    assert "MulBackward0" in str(report) and "ExpBackward0" in str(report)
