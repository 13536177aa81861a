"""Finite-difference checks of gradients: PyTorch's ``gradcheck`` and ``gradgradcheck``, and
:func:`check_graph`, which finds the node of a graph whose derivative is wrong.

``gradcheck(func, inputs)`` compares, for every output and every input that requires grad, the
Jacobian computed by backward passes (analytical) with central differences (numerical)
``(f(x + eps) - f(x - eps)) / (2 eps)``, element by element; ``fast_mode=True`` compares one
random projection ``v^T J u`` instead (PyTorch's random vectors: the same generator and seed,
so the same numbers). Failures raise :class:`GradcheckError` with PyTorch's messages, e.g.
``Jacobian mismatch for output 0 with respect to input 0,\\nnumerical:...\\nanalytical:...``.

``gradgradcheck`` runs ``gradcheck`` on the function that maps inputs and output gradients to the
input gradients (so it checks second derivatives).

``check_batched_grad=True`` compares, for each differentiable output, the vector-Jacobian
products for two random ``grad_output``s computed by one ``autograd.grad(...,
is_grads_batched=True)`` call with two one-by-one calls, with PyTorch's messages. The deprecated
``get_numerical_jacobian`` / ``get_analytical_jacobian`` are PyTorch's (``FutureWarning``, return
types, errors), on the same Jacobian code.

``check_undefined_grad`` is PyTorch's check: the outputs pass through an
:class:`UndefinedGradBackward` node (PyTorch's ``UndefinedGrad``), which sends no gradient on, so
the nodes below run with undefined gradients as the engine runs them in PyTorch (an op node sends
none, a custom Function's ``backward`` gets zeros, or None after
``set_materialize_grads(False)``): first all outputs at once, then each in turn when there are
several.

What differs from PyTorch (chainrule has no vmap, no sparse tensors):

* ``is_grads_batched`` runs one backward pass per ``grad_output`` (there is no vmap), so
  ``check_batched_grad`` finds what differs between those passes and the one-by-one ones (a
  backward that changes behaviour from call to call) and errors raised on the way, but not what
  only vmap rejects: backward code that leaves tensor operations (``.item()``, ``.numpy()``,
  ``.tolist()``, ``data_ptr()``) or writes a batched gradient into an unbatched tensor in place
  (``torch.zeros(n).copy_(grad)``) fails PyTorch's check with "While computing batched
  gradients, got: ..." and passes chainrule's.
* ``check_forward_ad=True`` is PyTorch's: the forward-mode Jacobian, column by column (fast mode:
  one tangent per input, PyTorch's random vectors), against the numerical one, and the
  undefined-tangent check; ``check_backward_ad=False`` skips every backward check.
  ``gradgradcheck(check_fwd_over_rev=True)`` is PyTorch's too: forward mode through the
  backward pass (the backward formulas run on the dual tensors).
  ``check_batched_forward_grad=True`` raises ``NotImplementedError`` (batched tangents need
  vmap), so it never passes silently.
* complex inputs and outputs are checked in slow mode as PyTorch does (Wirtinger derivatives,
  real and imaginary parts of outputs separately); ``fast_mode`` falls back to slow mode for
  them.
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from ..ops.complex_ops import view_as_complex
from ..ops.shape import stack
from . import engine, forward_ad
from .graph import preorder
from .node import AccumulateGrad, Node

__all__ = [
    "gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
    "get_analytical_jacobian", "get_numerical_jacobian_wrt_specific_input", "check_graph",
    "GraphCheck", "NodeCheck",
]

TensorOrTensors = Tensor | Sequence[Tensor]


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck``/``gradgradcheck`` when a check fails."""


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()

# PyTorch's fast mode draws its random vectors from a fresh CPU generator: an MT19937 with this
# default seed, 24 random bits per float32. Drawing them the same way gives the same vectors.
_DEFAULT_SEED = 67280421310721


# ----------------------------------------------------------------------------------------------
# Small helpers


def _as_tuple(x: Any) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x: Any) -> tuple[Tensor, ...]:
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _is_float_or_complex(x: Any) -> bool:
    return isinstance(x, Tensor) and x._data.dtype.kind in "fcV"


def _diff_inputs(inputs: tuple) -> list[tuple[int, Tensor]]:
    return [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.empty(0, dtype).real.dtype


def _allclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    """``torch.allclose(a, b)`` after promoting both to a common dtype."""
    common = np.result_type(a, b)
    return bool(np.allclose(a.astype(common), b.astype(common), rtol=rtol, atol=atol))


@contextmanager
def _writable(t: Tensor) -> Iterator[np.ndarray]:
    """The tensor's array, to perturb in place (a temporary copy if it is read-only)."""
    data = t._data
    if data.flags.writeable:
        yield data
        return
    t._data = data.copy()
    try:
        yield t._data
    finally:
        t._data = data


def _outputs_as_arrays(fn: Callable[..., Any], inputs: tuple) -> list[np.ndarray]:
    return [np.array(o._data, copy=True) for o in _as_tuple(fn(*inputs))]


def _check_same_dtype_and_shape(a: np.ndarray, b: np.ndarray, eps: float, idx: Any) -> None:
    from .._dtype import from_numpy_dtype
    from .._size import Size

    on_index = f"on index {idx} " if idx is not None else ""
    if a.shape != b.shape:
        raise AssertionError(
            f"Expected `func` to return outputs with the same shape when inputs are perturbed "
            f"{on_index}by {eps}, but got: shapes {Size(a.shape)} and {Size(b.shape)}."
        )
    if a.dtype != b.dtype:
        raise AssertionError(
            f"Expected `func` to return outputs with the same dtype when inputs are perturbed "
            f"{on_index}by {eps}, but got: dtypes {from_numpy_dtype(a.dtype)} and "
            f"{from_numpy_dtype(b.dtype)}."
        )


def _central_difference(
    fn: Callable[..., Any], inputs: tuple, data: np.ndarray, index: Any, delta: Any, eps: float,
    check_idx: Any,
) -> list[np.ndarray]:
    """``(f(x + delta) - f(x - delta)) / (2 eps)`` per output, flattened, where ``data[index]``
    is perturbed in place by ``delta`` (and restored)."""
    orig = np.array(data[index], copy=True)
    data[index] = orig - delta
    outa = _outputs_as_arrays(fn, inputs)
    data[index] = orig + delta
    outb = _outputs_as_arrays(fn, inputs)
    data[index] = orig
    result = []
    for a, b in zip(outa, outb, strict=True):
        _check_same_dtype_and_shape(a, b, eps, check_idx)
        if a.dtype == np.bool_:  # PyTorch differences every output, and ``-`` refuses bools
            raise RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                "`^` or `logical_xor()` operator instead."
            )
        result.append(((b - a) / (2 * eps)).reshape(-1))
    return result


# ----------------------------------------------------------------------------------------------
# Numerical Jacobians


def _numerical_jacobian(
    fn: Callable[..., Any], inputs: tuple, outputs: Sequence[Tensor], input_idx: int, eps: float,
    target: Tensor | None = None,
) -> list[np.ndarray]:
    """For input ``input_idx`` (or ``target``, a tensor ``fn`` may not even take, perturbed in
    place while ``fn(*inputs)`` runs), one ``(input numel, output numel)`` Jacobian per floating
    tensor of ``outputs``, by central differences element by element (Wirtinger for a complex
    input). As PyTorch's, the k-th Jacobian is filled with the differences of ``fn``'s k-th
    output: the two agree when non-floating outputs come last."""
    x = inputs[input_idx] if target is None else target
    float_out = [i for i, o in enumerate(_as_tuple(outputs)) if _is_float_or_complex(o)]
    jacobians = [
        np.zeros((x._data.size, outputs[i]._data.size), dtype=_jacobian_dtype(x, outputs[i]))
        for i in float_out
    ]
    is_complex = x._data.dtype.kind == "c"
    with _writable(x) as data:
        for d_idx, idx in enumerate(np.ndindex(*data.shape)):
            ds_dx = _central_difference(fn, inputs, data, idx, eps, eps, idx)
            if is_complex:
                ds_dy = _central_difference(fn, inputs, data, idx, eps * 1j, eps, idx)
                columns = [dx + dy * 1j for dx, dy in zip(ds_dx, ds_dy, strict=True)]
            else:
                columns = ds_dx
            for jac, i in zip(jacobians, float_out, strict=True):
                _copy_column(jac, d_idx, columns[i])
    return jacobians


def _copy_column(jacobian: np.ndarray, row: int, column: np.ndarray) -> None:
    """``jacobian[row] = column``, refused as PyTorch's ``copy_`` refuses a column of another
    size (a non-floating output before a floating one shifts them)."""
    size = jacobian.shape[1]
    if column.size not in (size, 1):
        raise RuntimeError(
            f"The expanded size of the tensor ({size}) must match the existing size "
            f"({column.size}) at non-singleton dimension 0.  Target sizes: [{size}].  "
            f"Tensor sizes: [{column.size}]"
        )
    jacobian[row] = column


def _jacobian_dtype(x: Tensor, out: Tensor) -> np.dtype:
    return x._data.dtype if x._data.dtype.kind == "c" else out._data.dtype


# ----------------------------------------------------------------------------------------------
# Analytical Jacobians


def _vjp(output: Tensor, diff_inputs: list[Tensor], grad_output: np.ndarray) -> tuple:
    return engine.grad(
        output, diff_inputs, wrap(grad_output), retain_graph=True, allow_unused=True
    )


def _analytical_jacobian_attributes(
    diff: Sequence[Tensor], output: Tensor, nondet_tol: float, v: np.ndarray | None = None,
    columns_of: Callable[[], Sequence[Tensor]] | None = None,
) -> tuple[tuple[np.ndarray, ...], bool, bool, bool]:
    """The ``(input numel, output numel)`` Jacobian of ``output`` for each tensor of ``diff``,
    by backward passes with one-hot output gradients (or the single row for ``v`` in fast
    mode), computed twice. Returns the first run's Jacobians, whether the second run agreed
    within ``nondet_tol`` (PyTorch's "reentrant"), whether every gradient had its input's shape,
    and whether every gradient of the right shape had its input's dtype.

    The Jacobians are allocated for the tensors ``columns_of()`` gives once the backward passes
    ran (default ``diff``): PyTorch's deprecated ``get_analytical_jacobian`` allocates them from
    its ``inputs`` as given."""
    out_data = output._data
    if v is not None:
        grad_outputs = [v.reshape(out_data.shape)]
    else:
        grad_outputs = []
        for j in range(out_data.size):
            basis = np.zeros(out_data.size, out_data.dtype)
            basis[j] = 1
            grad_outputs.append(basis.reshape(out_data.shape))
    # Both runs' backward passes first, then the Jacobians (the order PyTorch calls things in).
    runs = [[_vjp(output, list(diff), g) for g in grad_outputs] for _ in range(2)]
    allocate = tuple(diff if columns_of is None else columns_of())
    stacked = []
    sizes_ok = True
    dtypes_ok = True
    for rows in runs:
        jacobians = tuple(
            np.zeros((t._data.size, len(grad_outputs)), t._data.dtype) for t in allocate
        )
        for i, t in enumerate(diff if rows else ()):
            jac = jacobians[i]
            for j, grads in enumerate(rows):
                g = grads[i]
                if g is None:
                    continue
                if g._data.shape != t._data.shape:
                    sizes_ok = False
                elif g._data.dtype != t._data.dtype:
                    dtypes_ok = False
                if jac[:, j].size != g._data.size:
                    raise AssertionError(
                        f"Expected out_jacobian column to have {g._data.size} elements, but got "
                        f"{jac[:, j].size}"
                    )
                jac[:, j] = g._data.reshape(-1)
        stacked.append(jacobians)
    reentrant = all(
        not (j1.size and np.abs(j1 - j2).max() > nondet_tol)
        for j1, j2 in zip(stacked[0], stacked[1], strict=False)
    )
    return stacked[0], reentrant, sizes_ok, dtypes_ok


def _analytical_jacobian(
    inputs: tuple, output: Tensor, nondet_tol: float, check_grad_dtypes: bool,
    v: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """Per input that requires grad, the ``(input numel, output numel)`` Jacobian by backward
    passes (see :func:`_analytical_jacobian_attributes`); raises PyTorch's errors when the
    gradients' shapes or dtypes are wrong or the two runs disagree."""
    diff = [t for _, t in _diff_inputs(inputs)]
    jacobians, reentrant, sizes_ok, dtypes_ok = _analytical_jacobian_attributes(
        diff, output, nondet_tol, v
    )
    # PyTorch unpacks its (sizes, dtypes) verdicts as (dtypes, sizes), so each message goes with
    # the other flag. The engine checks and casts every gradient, so neither can be False here
    # (nor in PyTorch); the pairing is PyTorch's all the same.
    if not sizes_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not dtypes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and "
            "grad_output multiple times gives different values, although analytical gradient "
            "matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG
        )
    return jacobians


# ----------------------------------------------------------------------------------------------
# Slow and fast modes


def _mismatch_message(
    analytical: np.ndarray, numerical: np.ndarray, output_idx: int, input_idx: int,
    complex_part: str | None,
) -> str:
    prefix = ""
    if complex_part is not None:
        prefix = f"While considering the {complex_part} part of complex outputs only, "
    return (
        prefix + f"Jacobian mismatch for output {output_idx:d} with respect to input "
        f"{input_idx:d},\nnumerical:{wrap(numerical)}\nanalytical:{wrap(analytical)}\n"
    )


def _slow_gradcheck(
    func: Callable[..., Any], func_out: Any, inputs: tuple, outputs: tuple, eps: float,
    rtol: float, atol: float, check_grad_dtypes: bool, nondet_tol: float,
    complex_part: str | None = None,
) -> None:
    func_out = _as_tuple(func_out)
    diff = _diff_inputs(inputs)
    float_outputs = [o for o in func_out if _is_float_or_complex(o)]
    numerical = [_numerical_jacobian(func, inputs, float_outputs, i, eps) for i, _ in diff]
    if not outputs:
        for per_input in numerical:
            for jac in per_input:
                if np.count_nonzero(jac):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    # numerical[input][k]: the k-th floating output's Jacobians. As PyTorch, they are paired
    # with ``func``'s outputs by position and those that require grad kept (so a non-floating
    # output before a floating one shifts them, and PyTorch's IndexError follows).
    per_output = list(zip(*numerical, strict=True))
    kept = [nj for o, nj in zip(func_out, per_output, strict=False) if o.requires_grad]
    for i, output in enumerate(outputs):
        analytical = _analytical_jacobian(inputs, output, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, kept[i], strict=False)):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch_message(a, n, i, j, complex_part))


def _random_vector(
    generator: np.random.MT19937, numel: int, dtype: np.dtype
) -> np.ndarray:
    """PyTorch's ``torch.rand(numel, generator=g).to(dtype); vec /= vec.norm()``."""
    bits = generator.random_raw(numel) & ((1 << 24) - 1)
    vec = (bits.astype(np.float64) * 2.0**-24).astype(np.float32).astype(dtype)
    norm = np.sqrt(np.sum(vec * vec))
    return vec / norm


def _fast_gradcheck(
    func: Callable[..., Any], func_out: Any, inputs: tuple, outputs: tuple, eps: float,
    rtol: float, atol: float, check_grad_dtypes: bool, nondet_tol: float,
) -> None:
    diff = _diff_inputs(inputs)
    generator = np.random.MT19937()
    generator._legacy_seeding(_DEFAULT_SEED & 0xFFFFFFFF)  # torch's mt19937 uses the low 32 bits
    all_u = [
        _random_vector(generator, t._data.size, _real_dtype(t._data.dtype)) for _, t in diff
    ]
    all_v = [_random_vector(generator, o._data.size, o._data.dtype) for o in outputs]
    func_out = _as_tuple(func_out)
    float_out = [k for k, o in enumerate(func_out) if _is_float_or_complex(o)]

    numerical: list[list[np.ndarray]] = []  # [input][output]: v^T J u, or J u (no outputs)
    for (_, x), u in zip(diff, all_u, strict=True):
        with _writable(x) as data:
            delta = (u.reshape(data.shape) * eps).astype(data.dtype)
            ju = _central_difference(func, inputs, data, ..., delta, eps, None)
        ju = [ju[k] for k in float_out]
        if not outputs:
            for column in ju:
                if column.size and np.abs(column).max() > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
            continue
        diff_ju = [c for c, k in zip(ju, float_out, strict=True) if func_out[k].requires_grad]
        numerical.append([np.sum(v * c) for v, c in zip(all_v, diff_ju, strict=True)])
    if not outputs:
        return

    analytical: list[list[np.ndarray]] = []  # [output][input]
    for output, v in zip(outputs, all_v, strict=True):
        vj = _analytical_jacobian(inputs, output, nondet_tol, check_grad_dtypes, v=v)
        analytical.append([np.dot(j[:, 0], u) for j, u in zip(vj, all_u, strict=True)])

    for i, u in enumerate(all_u):
        for j, v in enumerate(all_v):
            a = np.asarray(analytical[j][i])
            n = np.asarray(numerical[i][j])
            adjusted_atol = atol * float(u.sum()) * float(v.sum())
            if not _allclose(a, n, rtol, adjusted_atol):
                raise GradcheckError(
                    _mismatch_message(a, n, j, i, None)
                    + _slow_mode_details(func, inputs, outputs, i, j, rtol, atol, eps)
                )


def _slow_mode_comparison(numerical: np.ndarray, analytical: np.ndarray, rtol: float,
                          atol: float) -> str:
    """The message's tail shared by reverse and forward mode: both Jacobians in slow mode,
    their max per-element difference, and whether slow mode would pass."""
    if numerical.size == 0:  # PyTorch's ``(numerical - analytical).abs().max()`` fails so
        raise RuntimeError(
            "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
            "reduction dim with the 'dim' argument."
        )
    max_diff = np.abs(numerical - analytical).max()
    message = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background "
        "\nabout fast mode. Below, we recompute numerical and analytical jacobians in slow mode:"
        f"\n\nNumerical:\n {wrap(numerical)}\nAnalytical:\n{wrap(analytical)}\n\n"
        f"The max per-element difference (slow mode) is: {wrap(np.asarray(max_diff))}.\n"
    )
    if _allclose(analytical, numerical, rtol, atol):
        message += FAST_FAIL_SLOW_OK_MSG
    return message


def _slow_mode_details(
    func: Callable[..., Any], inputs: tuple, outputs: tuple, input_idx: int, output_idx: int,
    rtol: float, atol: float, eps: float,
) -> str:
    """PyTorch's fast-mode failure epilogue: the full Jacobians of the failing pair."""
    position = _diff_inputs(inputs)[input_idx][0]
    numerical = _numerical_jacobian(func, inputs, outputs, position, eps)[output_idx]
    analytical = _analytical_jacobian(inputs, outputs[output_idx], float("inf"), False)[input_idx]
    return _slow_mode_comparison(numerical, analytical, rtol, atol)


# ----------------------------------------------------------------------------------------------
# Forward mode (check_forward_ad=True)


def _forward_mismatch_message(analytical: np.ndarray, numerical: np.ndarray, output_idx: int,
                              input_idx: int) -> str:
    return (
        f"Jacobian computed with forward mode mismatch for output {output_idx:d} with respect "
        f"to input {input_idx:d},\nnumerical:{wrap(numerical)}\nanalytical:{wrap(analytical)}\n"
    )


def _tangent_columns(fn: Callable[..., Any], inputs: tuple, tangents: dict[int, np.ndarray],
                     check_grad_dtypes: bool) -> list[np.ndarray | None]:
    """The tangents (flattened) of ``fn``'s floating outputs when the inputs that require grad
    are made dual, with ``tangents[position]`` (zeros for the others), as PyTorch's
    ``_get_analytical_jacobian_forward_ad`` runs it; None for an output without tangent."""
    with forward_ad.dual_level():
        dual_inputs = []
        for k, x in enumerate(inputs):
            if isinstance(x, Tensor) and x.requires_grad:
                t = tangents.get(k)
                data = np.zeros_like(x._data) if t is None else t.reshape(x._data.shape)
                x = forward_ad.make_dual(x.detach(), wrap(np.array(data, dtype=x._data.dtype)))
            dual_inputs.append(x)
        columns: list[np.ndarray | None] = []
        for out in _as_tuple(fn(*dual_inputs)):
            if not _is_float_or_complex(out):
                continue
            primal, tangent = forward_ad.unpack_dual(out)
            if (check_grad_dtypes and tangent is not None
                    and (primal._data.dtype.kind == "c") != (tangent._data.dtype.kind == "c")):
                raise GradcheckError("Forward AD gradient has dtype mismatch.")
            columns.append(None if tangent is None else np.array(tangent._data).reshape(-1))
        return columns


def _forward_jacobians(fn: Callable[..., Any], inputs: tuple, outputs: tuple,
                       check_grad_dtypes: bool) -> list[list[np.ndarray]]:
    """``[input][floating output]``: ``(input numel, output numel)`` Jacobians, column by column
    (one tangent of 1 at a time), as PyTorch's ``_get_analytical_jacobian_forward_ad``."""
    float_out = [o for o in _as_tuple(outputs) if _is_float_or_complex(o)]
    if any(t._data.dtype.kind == "c" for _, t in _diff_inputs(inputs)):
        raise ValueError(
            "Expected inputs to be non-complex for _get_analytical_jacobian_forward_ad."
        )
    jacobians = []
    for position, x in _diff_inputs(inputs):
        per_output = [np.zeros((x._data.size, o._data.size), dtype=o._data.dtype)
                      for o in float_out]
        for k in range(x._data.size):
            unit = np.zeros(x._data.size, dtype=x._data.dtype)
            unit[k] = 1
            columns = _tangent_columns(fn, inputs, {position: unit}, check_grad_dtypes)
            for jac, column in zip(per_output, columns, strict=False):
                if column is not None:
                    _copy_column(jac, k, column)
        jacobians.append(per_output)
    return jacobians


def _slow_gradcheck_forward(
    func: Callable[..., Any], func_out: Any, inputs: tuple, outputs: tuple, eps: float,
    rtol: float, atol: float, check_grad_dtypes: bool,
) -> None:
    """PyTorch's ``_slow_gradcheck(..., use_forward_ad=True)``: numerical Jacobians against
    those computed column by column in forward mode."""
    func_out = _as_tuple(func_out)
    diff = _diff_inputs(inputs)
    float_outputs = [o for o in func_out if _is_float_or_complex(o)]
    numerical = [_numerical_jacobian(func, inputs, float_outputs, i, eps) for i, _ in diff]
    if not outputs:
        for per_input in numerical:
            for jac in per_input:
                if np.count_nonzero(jac):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    per_output = list(zip(*numerical, strict=True))
    kept = [nj for o, nj in zip(func_out, per_output, strict=False) if o.requires_grad]
    analytical = _forward_jacobians(func, inputs, func_out, check_grad_dtypes)
    for i, n_per_out in enumerate(kept):
        for j, n in enumerate(n_per_out):
            a = analytical[j][i]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_forward_mismatch_message(a, n, i, j))


def _fast_gradcheck_forward(
    func: Callable[..., Any], func_out: Any, inputs: tuple, outputs: tuple, eps: float,
    rtol: float, atol: float, check_grad_dtypes: bool,
) -> None:
    """PyTorch's ``_fast_gradcheck(..., use_forward_ad=True)``: ``J u`` by central differences
    against the tangents of one forward pass per input with tangent ``u`` (PyTorch's random
    vectors)."""
    diff = _diff_inputs(inputs)
    generator = np.random.MT19937()
    generator._legacy_seeding(_DEFAULT_SEED & 0xFFFFFFFF)
    all_u = [
        _random_vector(generator, t._data.size, _real_dtype(t._data.dtype)) for _, t in diff
    ]
    func_out = _as_tuple(func_out)
    float_out = [k for k, o in enumerate(func_out) if _is_float_or_complex(o)]
    for i, ((position, x), u) in enumerate(zip(diff, all_u, strict=True)):
        with _writable(x) as data:
            delta = (u.reshape(data.shape) * eps).astype(data.dtype)
            ju = _central_difference(func, inputs, data, ..., delta, eps, None)
        numerical = [ju[k] for k in float_out]
        columns = _tangent_columns(func, inputs, {position: u}, check_grad_dtypes)
        for j, n in enumerate(numerical):
            column = columns[j] if j < len(columns) else None
            a = np.zeros_like(n) if column is None else column
            if not _allclose(a, n, rtol, atol * float(u.sum())):
                raise GradcheckError(
                    _forward_mismatch_message(a, n, j, i)
                    + _slow_mode_details_forward(func, inputs, outputs, i, j, rtol, atol, eps)
                )


def _slow_mode_details_forward(
    func: Callable[..., Any], inputs: tuple, outputs: tuple, input_idx: int, output_idx: int,
    rtol: float, atol: float, eps: float,
) -> str:
    """PyTorch's fast-mode epilogue in forward mode: the full Jacobians of the failing pair (as
    PyTorch, the input is ``inputs[input_idx]``, counted among all inputs)."""
    position = _diff_inputs(inputs)[input_idx][0]
    # (a tuple, as PyTorch's: no such output is its "tuple index out of range")
    numerical = tuple(_numerical_jacobian(func, inputs, outputs, position, eps))[output_idx]

    def one_input(x: Any) -> Any:
        new_inputs = list(inputs)
        new_inputs[input_idx] = x
        return _as_tuple(func(*new_inputs))[output_idx]

    analytical = _forward_jacobians(one_input, (inputs[input_idx],), (outputs[output_idx],),
                                    False)[0][0]
    return _slow_mode_comparison(numerical, analytical, rtol, atol)


def _test_undefined_forward_mode(func: Callable[..., Any], inputs: tuple) -> None:
    """PyTorch's check: an input given a zero tangent and the same input without tangent give
    the outputs equal tangents (the other inputs with PyTorch's random tangents)."""
    diff = _diff_inputs(inputs)
    generator = np.random.MT19937()
    generator._legacy_seeding(_DEFAULT_SEED & 0xFFFFFFFF)
    tangents = {
        position: _random_vector(generator, t._data.size, _real_dtype(t._data.dtype))
        for position, t in diff
    }
    for position, x in diff:
        zero = dict(tangents)
        zero[position] = np.zeros(x._data.size, dtype=x._data.dtype)
        with_zero = _tangent_columns(func, inputs, zero, False)
        without = list(inputs)
        without[position] = x.detach()
        no_tangent = _tangent_columns(func, tuple(without), tangents, False)
        for index_o, (res1, res2) in enumerate(zip(with_zero, no_tangent, strict=False)):
            if res1 is not None and res2 is not None and not np.allclose(res1, res2):
                raise GradcheckError(
                    "Mismatch in tangent values for output with index: ", index_o,
                    " when input: ", x, " has an undefined tangent value. ", " Got: ",
                    wrap(res1), " but expected: ", wrap(res2),
                )


def _real_and_imag_output(fn: Callable[..., Any]) -> tuple[Callable[..., Any], ...]:
    def part(name: str) -> Callable[..., Any]:
        def wrapped(*inputs: Any) -> tuple:
            outs = _as_tuple(fn(*inputs))
            return tuple(getattr(o, name) if _is_complex(o) else o for o in outs)

        return wrapped

    return part("real"), part("imag")


def _real_and_imag_input(fn: Callable[..., Any], positions: list[int],
                         inputs: tuple) -> tuple[Callable[..., Any], ...]:
    """``fn`` of real inputs in place of the complex ones at ``positions``: ``x -> fn(x + i
    imag)`` and ``y -> fn(real + i y)``, the other part taken from ``inputs`` (PyTorch's)."""
    def apply(make: Callable[[Any, Any], Any]) -> Callable[..., Any]:
        def wrapped(*given: Any) -> tuple:
            new_inputs = list(given)
            for p in positions:
                new_inputs[p] = make(new_inputs[p], inputs[p])
            return _as_tuple(fn(*new_inputs))

        return wrapped

    # (PyTorch computes ``x + orig.imag * 1j``; the same values are built here as a complex
    # view of the pair, whose tangent forward mode carries from a real input)
    def join(real: Any, imag: Any) -> Any:
        return view_as_complex(stack((real, imag), -1))

    return (apply(lambda x, orig: join(x, orig.imag)),
            apply(lambda y, orig: join(orig.real, y)))


def _complex_part_error(error: GradcheckError, positions: list[int],
                        part: str) -> GradcheckError:
    """PyTorch's message names the part of a complex input a forward-mode mismatch is in."""
    message = str(error)
    head = "Jacobian computed with forward mode mismatch for output "
    if message.startswith(head):
        input_idx = int(message[len(head):].split("input ", 1)[1].split(",", 1)[0])
        if input_idx in positions:
            which = "imaginary" if part == "imag" else "real"
            return GradcheckError(
                f"While considering the {which} part of complex inputs only, {message}"
            )
    return error


def _is_complex(x: Any) -> bool:
    return isinstance(x, Tensor) and x._data.dtype.kind == "c"


# ----------------------------------------------------------------------------------------------
# Extra checks


def _check_inputs(inputs: tuple) -> None:
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            continue
        if inp._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{idx} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ",
                stacklevel=4,
            )
        data = inp._data
        # (An empty array has no overlapping elements, whatever NumPy says its strides are.)
        if data.size and not all(st > 0 or sz <= 1 for st, sz in zip(data.strides, data.shape,
                                                                     strict=True)):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck."
            )
        any_requires_grad = True
    if not any_requires_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        )


def _test_backward_mul_by_grad_output(outputs: tuple, inputs: tuple) -> None:
    diff = [t for _, t in _diff_inputs(inputs)]
    if not outputs:
        return  # nothing to backpropagate from (PyTorch's engine has nothing to run either)
    zeros = [wrap(np.zeros_like(o._data)) for o in outputs]
    grads = engine.grad(outputs, diff, zeros, allow_unused=True)
    for gi, di in zip(grads, diff, strict=True):
        if gi is None:
            continue
        if np.any(gi._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi._data.dtype != di._data.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi._data.shape != di._data.shape:
            raise GradcheckError("grad is incorrect size")


def _warn_bc_breaking() -> None:
    warnings.warn(
        "Backwards compatibility: New undefined gradient support checking feature is enabled by "
        "default, but it may break existing callers of this function. If this is true for you, "
        'you can call this function with "check_undefined_grad=False" to disable the feature',
        stacklevel=4,
    )


class UndefinedGradBackward(Node):
    """PyTorch's ``torch._C._functions.UndefinedGrad`` node: whatever gradient it receives, it
    sends none on, so the node below runs with an undefined gradient."""

    __slots__ = ()

    def name(self) -> str:
        """``'chainrule::autograd::UndefinedGradBackward'`` (PyTorch's C++ name, this
        package's)."""
        return "chainrule::autograd::UndefinedGradBackward"

    def apply(self, grads: Any, create_graph: bool) -> tuple[Any, ...]:
        """No gradient for its input."""
        return (None,)


def _undefined_grad(t: Tensor) -> Tensor:
    """``UndefinedGrad()(t)``: ``t``'s values, behind an :class:`UndefinedGradBackward` node."""
    from .._tensor import gradient_edge, set_history
    from .node import new_node

    data = t._data
    node = new_node(UndefinedGradBackward, (gradient_edge(t),), ((data.shape, data.dtype),))
    out = wrap(data.copy())
    set_history(out, node)
    return out


def _test_undefined_backward_mode(func: Callable[..., Any], inputs: tuple, n_outputs: int) -> None:
    """PyTorch's check of undefined output gradients: every differentiable output of a fresh
    ``func(*inputs)`` gets an undefined gradient (through :class:`UndefinedGradBackward`); then,
    with several outputs, each in turn does while the others get zeros. Backward must cope
    (no RuntimeError) and give zero or no input gradients."""
    diff = [t for _, t in _diff_inputs(inputs)]

    def check(outputs: list[Tensor]) -> None:
        zeros = [wrap(np.zeros_like(o._data)) for o in outputs]
        try:
            grads = engine.grad(outputs, diff, zeros, allow_unused=True)
        except RuntimeError as error:
            _warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ) from error
        for gi in grads:
            if gi is not None and not np.all(gi._data == 0):
                _warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    'undefined or zero. Please look at "Notes about undefined output gradients" '
                    'in "tools/autograd/derivatives.yaml"'
                )

    to_check = [[_undefined_grad(o) for o in _differentiable_outputs(func(*inputs))]]
    if len(to_check[0]) > 1:
        for undefined in range(n_outputs):
            to_check.append([
                _undefined_grad(o) if k == undefined else o
                for k, o in enumerate(_differentiable_outputs(func(*inputs)))
            ])
    for outputs in to_check:
        check(outputs)


FAILED_BATCHED_GRAD_MSG = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
This could have been invoked in a number of ways (via a test that calls
gradcheck/gradgradcheck directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_grad=False` and/or `check_batched_gradgrad=False`.

If you're modifying an existing operator that supports batched grad computation,
or wish to make a new operator work with batched grad computation, please read
the following.

To compute batched grads (e.g., jacobians, hessians), we vmap over the backward
computation. The most common failure case is if there is a 'vmap-incompatible
operation' in the backward pass. Please see
NOTE: [How to write vmap-compatible backward formulas]
in the codebase for an explanation of how to fix this.
""".strip()


def _test_batched_grad(inputs: tuple, output: Tensor, output_idx: int) -> None:
    """PyTorch's ``check_batched_grad``: the vector-Jacobian products of ``output`` for two
    random ``grad_output``s (``randn_like``, from the global generator), computed in one
    ``autograd.grad(..., is_grads_batched=True)`` call, must match two one-by-one calls
    (``allclose`` at its default tolerances; an input that gets no gradient counts as zeros).

    chainrule's ``is_grads_batched`` runs one backward pass per grad_output (there is no vmap),
    so this finds what differs between those passes and the one-by-one ones, and errors
    raised on the way; PyTorch also catches backward code that vmap cannot run (``.item()``,
    ``.numpy()``, writing a batched gradient into an unbatched tensor), which cannot happen
    here (see the module docstring)."""
    from ..ops.creation import randn_like
    from ..ops.shape import stack

    diff = [t for _, t in _diff_inputs(inputs)]

    def filled(grads: tuple, batch: tuple[int, ...]) -> list[np.ndarray]:
        return [
            np.zeros(batch + t._data.shape, t._data.dtype) if g is None else g._data
            for g, t in zip(grads, diff, strict=True)
        ]

    grad_outputs = [randn_like(output) for _ in range(2)]
    one_by_one = [
        filled(engine.grad(output, diff, g, retain_graph=True, allow_unused=True), ())
        for g in grad_outputs
    ]
    expected = [np.stack(shards) for shards in zip(*one_by_one, strict=True)]
    try:
        batched = engine.grad(output, diff, stack(grad_outputs), retain_graph=True,
                              allow_unused=True, is_grads_batched=True)
    except RuntimeError as error:
        raise GradcheckError(
            f"While computing batched gradients, got: {error}\n\n{FAILED_BATCHED_GRAD_MSG}"
        ) from error
    result = filled(batched, (len(grad_outputs),))
    for input_idx, (res, exp) in enumerate(zip(result, expected, strict=True)):
        if res.shape == exp.shape and np.allclose(res, exp):
            continue
        raise GradcheckError(
            f"For output {output_idx} and input {input_idx}:\n\n{FAILED_BATCHED_GRAD_MSG}\n\n"
            f"Got:\n{wrap(res)}\n\nExpected:\n{wrap(exp)}"
        )


# ----------------------------------------------------------------------------------------------
# gradcheck and gradgradcheck


def gradcheck(
    func: Callable[..., Any],
    inputs: TensorOrTensors,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    Every input that is a floating Tensor with ``requires_grad=True`` is checked against every
    output that requires grad. Returns True, or raises :class:`GradcheckError` (returns False
    with ``raise_exception=False``). Use float64 inputs: the defaults are tuned for them.
    See the module docstring for the options chainrule treats differently.

    Example:
        >>> import chainrule as torch
        >>> x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
        >>> torch.autograd.gradcheck(lambda x: (x.exp() * x).sum(), (x,))
        True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True"
        )
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True"
        )
    if check_batched_forward_grad:
        raise NotImplementedError(
            "gradcheck(check_batched_forward_grad=True): chainrule has no vmap to batch tangents"
        )
    try:
        return _gradcheck(
            func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
            check_batched_grad, fast_mode, check_forward_ad, check_backward_ad,
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(
    func: Callable[..., Any], inputs: TensorOrTensors, eps: float, atol: float, rtol: float,
    nondet_tol: float, check_undefined_grad: bool, check_grad_dtypes: bool,
    check_batched_grad: bool, fast_mode: bool, check_forward_ad: bool = False,
    check_backward_ad: bool = True,
) -> bool:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)
    any_complex = any(_is_complex(o) for o in _as_tuple(func_out)) or any(
        _is_complex(t) for _, t in _diff_inputs(tupled_inputs)
    )
    check = _fast_gradcheck if fast_mode and not any_complex else _slow_gradcheck
    args = (eps, rtol, atol, check_grad_dtypes, nondet_tol)
    if not check_backward_ad:
        pass
    elif any(_is_complex(o) for o in _as_tuple(func_out)):
        if not hasattr(Tensor, "real"):
            raise NotImplementedError(
                "gradcheck: complex outputs are checked through their real and imaginary parts, "
                "and chainrule has no Tensor.real / Tensor.imag yet"
            )
        real_fn, imag_fn = _real_and_imag_output(func)
        imag_out = imag_fn(*tupled_inputs)
        _slow_gradcheck(imag_fn, imag_out, tupled_inputs, _differentiable_outputs(imag_out),
                        *args, complex_part="imaginary")
        real_out = real_fn(*tupled_inputs)
        _slow_gradcheck(real_fn, real_out, tupled_inputs, _differentiable_outputs(real_out),
                        *args, complex_part="real")
    else:
        check(func, func_out, tupled_inputs, outputs, *args)
    if check_forward_ad:
        forward_check = _fast_gradcheck_forward if fast_mode else _slow_gradcheck_forward
        complex_positions = [i for i, t in enumerate(tupled_inputs) if _is_complex(t)]
        if complex_positions:
            # As PyTorch: forward mode takes real inputs; each complex input is checked through
            # its imaginary part, then its real part, the other part held constant.
            parts = _real_and_imag_input(func, complex_positions, tupled_inputs)
            for part_fn, part in ((parts[1], "imag"), (parts[0], "real")):
                part_inputs = tuple(
                    getattr(t, part) if i in complex_positions else t
                    for i, t in enumerate(tupled_inputs)
                )
                part_out = part_fn(*part_inputs)
                try:
                    forward_check(part_fn, part_out, part_inputs,
                                  _differentiable_outputs(part_out), eps, rtol, atol,
                                  check_grad_dtypes)
                except GradcheckError as error:
                    raise _complex_part_error(error, complex_positions, part) from None
            if check_undefined_grad:
                for part_fn, part in ((parts[1], "imag"), (parts[0], "real")):
                    _test_undefined_forward_mode(part_fn, tuple(
                        getattr(t, part) if i in complex_positions else t
                        for i, t in enumerate(tupled_inputs)
                    ))
        else:
            forward_check(func, func_out, tupled_inputs, outputs, eps, rtol, atol,
                          check_grad_dtypes)
            if check_undefined_grad:
                _test_undefined_forward_mode(func, tupled_inputs)
    if not check_backward_ad:
        return True  # (the remaining checks need backward mode, as PyTorch's)
    if check_batched_grad:
        for i, output in enumerate(outputs):
            _test_batched_grad(tupled_inputs, output, i)
    _test_backward_mul_by_grad_output(outputs, tupled_inputs)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, tupled_inputs, len(outputs))
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: TensorOrTensors,
    grad_outputs: TensorOrTensors | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: ``gradcheck`` of ``(inputs, grad_outputs) -> input grads``.

    Without ``grad_outputs``, random ones in ``[-1, 1)`` are drawn from chainrule's global
    generator (``chainrule.manual_seed`` makes them reproducible).

    Example:
        >>> import chainrule as torch
        >>> x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
        >>> torch.autograd.gradgradcheck(lambda x: x.sin() * x, (x,))
        True
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True"
        )
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True"
        )
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(
            _random_grad_output(o, gen_non_contig_grad_outputs) for o in outputs
        )
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_indices = {i for i, t in _diff_inputs(tupled_inputs)}
    diff_grad_output_indices = {
        i for i, t in enumerate(tupled_grad_outputs) if t.requires_grad
    }

    def new_func(*args: Any) -> tuple[Tensor, ...]:
        input_args = tuple(
            x.requires_grad_() if i in diff_input_indices else x
            for i, x in enumerate(args[:-num_outputs])
        )
        outputs = _differentiable_outputs(func(*input_args))
        grad_outs = tuple(
            x.requires_grad_() if i in diff_grad_output_indices else x
            for i, x in enumerate(args[-num_outputs:])
        )
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_indices)
        grad_inputs = engine.grad(
            outputs, diff_input_args, grad_outs, create_graph=True, allow_unused=True
        )
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(
        new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol, rtol=rtol,
        raise_exception=raise_exception, nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad, fast_mode=fast_mode,
        check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked,
    )


def _random_grad_output(output: Tensor, noncontiguous: bool) -> Tensor:
    """PyTorch's ``make_tensor(shape, low=-1, high=1, requires_grad=True)`` for an output."""
    from ..ops.creation import rand

    data = output._data
    dtype = data.dtype if data.dtype.kind in "fcV" else np.dtype(np.float64)
    from .._dtype import from_numpy_dtype

    # The shape as one argument: ``rand(*())`` would be a call without a size (0-d outputs).
    # (np.asarray: arithmetic on a 0-d array gives a NumPy scalar.)
    values = np.asarray(rand(data.shape, dtype=from_numpy_dtype(dtype))._data * 2 - 1, dtype)
    if noncontiguous and values.size > 1:
        values = np.repeat(values, 2, axis=-1)[..., ::2]  # same values, every other element
    t = wrap(values)
    t._requires_grad = True
    return t


# ----------------------------------------------------------------------------------------------
# PyTorch's deprecated Jacobian functions


def _deprecation_message(name: str) -> str:
    return (
        f"`{name}` was part of PyTorch's private API and not meant to be exposed. We are "
        "deprecating it and it will be removed in a future version of PyTorch. If you have a "
        "specific use for this or feature request for this to be a stable API, please file us an "
        "issue at https://github.com/pytorch/pytorch/issues/new"
    )


def _iter_tensors(x: Any) -> Iterator[Tensor]:
    """The tensors that require grad in ``x``, a tensor or nested iterables of them (strings and
    other objects skipped), depth first."""
    if isinstance(x, Tensor):
        if x.requires_grad:
            yield x
    elif isinstance(x, Iterable) and not isinstance(x, str):
        for element in x:
            yield from _iter_tensors(element)


def get_numerical_jacobian(
    fn: Callable[[tuple], Any],
    inputs: Any,
    target: Any = None,
    eps: float = 1e-3,
    grad_out: float = 1.0,
) -> tuple[Tensor, ...]:
    """Deprecated (as in PyTorch, with its ``FutureWarning``): the Jacobians of ``fn``'s first
    floating output by central differences, one ``(input numel, output numel)`` tensor per
    tensor of ``target`` (default ``inputs``) that requires grad.

    ``fn`` takes the inputs as one tuple. A ``target`` tensor need not be one of ``inputs``: it
    is perturbed in place while ``fn(inputs)`` runs. ``grad_out`` must be 1.0.

    Example:
        >>> import warnings
        >>> import chainrule as torch
        >>> from chainrule.autograd.gradcheck import get_numerical_jacobian
        >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", FutureWarning)
        ...     (jacobian,) = get_numerical_jacobian(lambda ins: ins[0] * 3, (x,))
        >>> jacobian
        tensor([[3.0000, 0.0000],
                [0.0000, 3.0000]], dtype=chainrule.float64)
    """
    warnings.warn(_deprecation_message("get_numerical_jacobian"), FutureWarning, stacklevel=2)
    if grad_out != 1.0:  # (kept for backward compatibility only)
        raise ValueError(
            "Expected grad_out to be 1.0. get_numerical_jacobian no longer supports values of "
            "grad_out != 1.0."
        )
    tupled = _as_tuple(inputs)

    def packed(*args: Any) -> Any:
        return fn(args)

    outputs = _as_tuple(packed(*tupled))
    if any(o.is_complex() for o in outputs):
        raise ValueError(
            "Expected output to be non-complex. get_numerical_jacobian no longer supports "
            "functions that return complex outputs."
        )
    if target is None:
        target = inputs
    # As PyTorch: the tensors of ``target`` that require grad (searched in nested sequences
    # too), as many as ``target`` has such tensors at its top level.
    count = sum(1 for a in target if isinstance(a, Tensor) and a.requires_grad)
    float_outputs = [o for o in outputs if _is_float_or_complex(o)]
    jacobians = []
    for x, _ in zip(_iter_tensors(target), range(count), strict=False):
        per_output = _numerical_jacobian(packed, tupled, float_outputs, 0, eps, target=x)
        jacobians.append(wrap(tuple(per_output)[0]))
    return tuple(jacobians)


def get_numerical_jacobian_wrt_specific_input(
    fn: Callable[..., Any], input_idx: int, inputs: Any, outputs: Any, eps: float,
    input: Tensor | None = None, is_forward_ad: bool = False,
) -> tuple[Tensor, ...]:
    """The numerical Jacobians of ``fn(*inputs)`` with respect to one input, as PyTorch's
    (public, not deprecated): ``inputs[input_idx]``, or ``input`` (a tensor ``fn`` may not even
    take, perturbed in place while ``fn`` runs), which must require grad.

    Each element is perturbed by ``eps`` both ways (central differences; a complex input gives
    the conjugate Wirtinger derivative). Returns one ``(input numel, output numel)`` Jacobian per
    floating tensor of ``outputs`` (``fn``'s outputs, computed beforehand: only their number,
    sizes and dtypes are read), the k-th filled from ``fn``'s k-th output as PyTorch fills it.
    ``is_forward_ad`` allows complex differences of a real input.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.autograd.gradcheck import get_numerical_jacobian_wrt_specific_input
        >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        >>> fn = lambda a: a * 3
        >>> get_numerical_jacobian_wrt_specific_input(fn, 0, (x,), (fn(x),), 1e-6)[0]
        tensor([[3.0000, 0.0000],
                [0.0000, 3.0000]], dtype=chainrule.float64)
    """
    x = inputs[input_idx] if input is None else input
    if not x.requires_grad:
        raise AssertionError("Expected input to have requires_grad=True")
    tupled = _as_tuple(inputs)

    def perturbed(*args: Any) -> tuple:
        return tuple(a.clone() for a in _as_tuple(fn(*args)))

    columns: list[list[np.ndarray]] = []
    is_complex = x._data.dtype.kind == "c"
    with _writable(x) as data:
        for idx in np.ndindex(*data.shape):
            ds_dx = _central_difference(perturbed, tupled, data, idx, eps, eps, idx)
            if is_complex:
                ds_dy = _central_difference(perturbed, tupled, data, idx, eps * 1j, eps, idx)
                for dx in ds_dx:
                    if dx.dtype.kind == "c":
                        raise AssertionError("Expected ds_dx to be real-valued, not complex")
                columns.append([dx + dy * 1j for dx, dy in zip(ds_dx, ds_dy, strict=False)])
            else:
                if not is_forward_ad and any(dx.dtype.kind == "c" for dx in ds_dx):
                    raise AssertionError("Expected ds_dx to be real-valued, not complex.")
                columns.append(ds_dx)
    numel = x._data.size
    jacobians = tuple(
        wrap(np.zeros((numel, o._data.size),
                      dtype=x._data.dtype if is_complex else o._data.dtype))
        for o in outputs if _is_float_or_complex(o)
    )
    for i, jacobian in enumerate(jacobians):
        for k, column in enumerate(columns):
            # (through Tensor indexing: a column of another size gets PyTorch's error)
            jacobian[k] = wrap(column[i])
    return jacobians


def get_analytical_jacobian(
    inputs: Any, output: Tensor, nondet_tol: float = 0.0, grad_out: float = 1.0
) -> tuple[tuple[Tensor, ...], bool, bool, bool]:
    """Deprecated (as in PyTorch, with its ``FutureWarning``): the Jacobians of ``output`` by
    backward passes, one ``(input numel, output numel)`` tensor per tensor of ``inputs`` that
    requires grad, computed twice.

    Returns ``(jacobians, reentrant, correct_grad_sizes, correct_grad_types)`` as PyTorch does:
    ``reentrant`` says whether the two runs agreed within ``nondet_tol``; the two flags are
    always True (the engine checks and casts every gradient), and PyTorch's third and fourth
    entries are its dtype and size verdicts in that order. ``grad_out`` must be 1.0.

    Example:
        >>> import warnings
        >>> import chainrule as torch
        >>> from chainrule.autograd.gradcheck import get_analytical_jacobian
        >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", FutureWarning)
        ...     (jacobian,), reentrant, _, _ = get_analytical_jacobian((x,), x * 3)
        >>> jacobian, reentrant
        (tensor([[3., 0.],
                [0., 3.]], dtype=chainrule.float64), True)
    """
    warnings.warn(_deprecation_message("get_analytical_jacobian"), FutureWarning, stacklevel=2)
    if grad_out != 1.0:  # (kept for backward compatibility only)
        raise ValueError(
            "Expected grad_out to be 1.0. get_analytical_jacobian no longer supports values of "
            "grad_out != 1.0."
        )
    if output.is_complex():
        raise ValueError(
            "Expected output to be non-complex. get_analytical_jacobian no longer supports "
            "functions that return complex outputs."
        )
    diff = list(_iter_tensors(inputs))

    def columns_of() -> list[Tensor]:
        # PyTorch allocates the Jacobians from ``inputs`` iterated as given (a tensor: rows).
        return [t for t in inputs if _is_float_or_complex(t) and t.requires_grad]

    jacobians, reentrant, sizes_ok, dtypes_ok = _analytical_jacobian_attributes(
        diff, output, nondet_tol, columns_of=columns_of
    )
    return tuple(wrap(j) for j in jacobians), reentrant, dtypes_ok, sizes_ok


# ----------------------------------------------------------------------------------------------
# check_graph: find the node whose derivative is wrong


@dataclass
class NodeCheck:
    """The verdict on one node of the graph.

    ``status`` is ``"ok"``, ``"mismatch"`` or ``"unchecked"`` (then ``reason`` says why). For a
    mismatch, ``input_index``/``input_name`` name the input, and ``numerical``/``analytical`` are
    the values compared: the gradient ``J^T v`` for a small input, the directional derivative
    ``v^T J u`` otherwise.
    """

    index: int
    node: Node
    status: str
    reason: str = ""
    input_index: int | None = None
    input_name: str | None = None
    numerical: np.ndarray | None = None
    analytical: np.ndarray | None = None

    @property
    def name(self) -> str:
        """The node's name, e.g. ``'MulBackward0'``."""
        return self.node.name()

    def __str__(self) -> str:
        head = f"node {self.index} ({self.name})"
        if self.status == "unchecked":
            return f"{head}: unchecked, {self.reason}"
        if self.status == "mismatch" and self.reason:
            return f"{head}: the derivative for input {self.input_index} ({self.input_name!r}) " \
                f"{self.reason}"
        if self.status == "mismatch":
            return (
                f"{head}: the derivative for input {self.input_index} ({self.input_name!r}) "
                f"disagrees with finite differences,\n"
                f"numerical:{wrap(np.asarray(self.numerical))}\n"
                f"analytical:{wrap(np.asarray(self.analytical))}"
            )
        return f"{head}: ok"


@dataclass
class GraphCheck:
    """What :func:`check_graph` found: one :class:`NodeCheck` per node, in the order the
    engine runs them (the node nearest the output first). True when nothing mismatched."""

    checks: list[NodeCheck] = field(default_factory=list)

    @property
    def first_failure(self) -> NodeCheck | None:
        """The first node (in engine order) whose derivative disagrees, or None."""
        return next((c for c in self.checks if c.status == "mismatch"), None)

    @property
    def checked(self) -> list[NodeCheck]:
        """The nodes that could be checked."""
        return [c for c in self.checks if c.status != "unchecked"]

    def __bool__(self) -> bool:
        return self.first_failure is None

    def __str__(self) -> str:
        return "\n".join(str(c) for c in self.checks)


def check_graph(
    output: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor] | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    *,
    raise_exception: bool = True,
    seed: int = 0,
) -> GraphCheck:
    """Check each op-table node of ``output``'s graph against finite differences and name the
    first one (in engine order: nearest the output first) whose derivative disagrees.

    Beyond PyTorch. A node is checked on its own: its op's NumPy forward (``node._op.forward``)
    is re-run in float64 around the point the node was recorded at, and compared with the node's
    own backward (``node.apply``) through random projections, ``v^T J u`` both ways (unit
    vectors ``u`` per input and ``v`` per output, drawn from ``seed``). Tolerances are
    gradcheck's, with ``atol`` scaled by ``sum|u| * sum|v|`` as PyTorch's fast mode does. The
    walk is iterative; with ``inputs``, only nodes on a path from ``output`` to them are checked.

    The point is rebuilt from what the graph kept: the node's saved arguments, the leaves'
    current values, values other nodes saved (a saved ``result``, a saved argument of a later
    node), and outputs recomputed by re-running forwards from the leaves up. An argument that no
    derivative of the node reads (so was not saved) and is not known otherwise is replaced by a
    stand-in -- random values for an input that requires grad, zero for a constant, its default
    for a number -- which cannot change the derivatives being checked (they do not read it),
    unless the node also reads its ``result``.

    What it cannot check (reported as ``"unchecked"`` with the reason): nodes whose forward
    cannot be re-run that way (a required number that was not saved, e.g. ``expand``'s size),
    custom ``Function`` nodes (their forward is user code: use :func:`gradcheck` on them),
    in-place rewrites (``CopySlices``, ``AsStridedBackward0``), complex nodes, and graphs whose
    saved values were freed by a backward pass without ``retain_graph``. Points where an op is
    not differentiable (kinks of ``relu``, ``abs``, ``max``) may report mismatches that are not
    bugs; leaves modified in place after the graph was recorded give a wrong point.

    Raises :class:`GradcheckError` naming the node at the first mismatch (with
    ``raise_exception=False``, returns the report instead). Returns a :class:`GraphCheck`.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.autograd.gradcheck import check_graph
        >>> x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
        >>> report = check_graph((x.exp() * x).sum())
        >>> bool(report), [c.name for c in report.checked]
        (True, ['SumBackward0', 'MulBackward0', 'ExpBackward0'])
    """
    roots = [out.grad_fn for out in _as_tuple(output) if out.grad_fn is not None]
    order = _engine_order(roots)
    shapes = _output_shapes(order, _as_tuple(output))
    values = _known_values(order, shapes)
    if inputs is not None:
        order = _restrict_to_inputs(order, _as_tuple(inputs))
    rng = np.random.default_rng(seed)
    report = GraphCheck()
    for index, node in enumerate(order):
        result = _check_node(index, node, values, shapes, eps, atol, rtol, rng)
        report.checks.append(result)
        if result.status == "mismatch" and raise_exception:
            raise GradcheckError(
                f"check_graph: the first node whose derivative disagrees is {result}"
            )
    return report


def _engine_order(roots: list[Node]) -> list[Node]:
    """Every node below ``roots`` except AccumulateGrad, most recently created first (the
    order the engine runs them in)."""
    nodes = [node for node in preorder(roots) if type(node) is not AccumulateGrad]
    nodes.sort(key=lambda n: -n._seq)
    return nodes


def _restrict_to_inputs(order: list[Node], inputs: tuple) -> list[Node]:
    """The nodes of ``order`` from which the gradient edge of one of ``inputs`` is reached."""
    from .._tensor import gradient_edge

    targets = {gradient_edge(t)[0] for t in inputs} - {None}
    reaches: set[Node] = set(targets)
    for node in reversed(order):  # created first, so a node's children come before it
        if any(child in reaches for child, _ in node.next_functions):
            reaches.add(node)
    return [n for n in order if n in reaches and n not in targets]


def _output_shapes(order: list[Node], outputs: tuple) -> dict[tuple[Node, int], tuple]:
    """The shape of every ``(node, output_nr)`` that some node records as an input's metadata
    (and of the outputs given to ``check_graph``)."""
    shapes: dict[tuple[Node, int], tuple] = {}
    for out in outputs:
        if out.grad_fn is not None:
            shapes[(out.grad_fn, out.output_nr)] = tuple(out.shape)
    for node in order:
        for edge, meta in zip(node.next_functions, node._in_meta, strict=False):
            if edge[0] is not None and meta is not None:
                shapes.setdefault(edge, tuple(meta[0]))
    return shapes


def _known_values(
    order: list[Node], shapes: dict[tuple[Node, int], tuple]
) -> dict[tuple[Node, int], np.ndarray]:
    """The forward value of every ``(node, output_nr)`` the graph lets us know: leaves, what
    nodes saved, then outputs recomputed with the ops' forwards from the leaves up."""
    from ..ops._opnode import OpNode

    values: dict[tuple[Node, int], np.ndarray] = {}
    for node in order:
        for child, nr in node.next_functions:
            if type(child) is AccumulateGrad:
                values[(child, nr)] = child.variable._data
        if not isinstance(node, OpNode) or type(node._saved) is not tuple:
            continue
        for i, pos in enumerate(node._op.input_pos):
            value = node._saved[pos]
            edge = node.next_functions[i]
            if isinstance(value, Tensor) and edge[0] is not None:
                values.setdefault(edge, value._data)
        if node._result is not None:
            values.setdefault((node, 0), node._result[0])
    for node in reversed(order):
        if (node, 0) in values or not isinstance(node, OpNode):
            continue
        args = _forward_args(node, values, shapes, None)
        if isinstance(args, str):
            continue
        try:
            outs = _forward_outputs(node._op, args)
        except Exception:  # noqa: BLE001 - a forward that cannot re-run leaves the value unknown
            continue
        for nr, out in enumerate(outs):
            values[(node, nr)] = out
    return values


_UNKNOWN: Any = object()


def _forward_args(
    node: Any, values: dict[tuple[Node, int], np.ndarray], shapes: dict[tuple[Node, int], tuple],
    rng: np.random.Generator | None,
) -> list[Any] | str:
    """The node's forward arguments (arrays and numbers), or why they cannot be known.

    With ``rng``, arguments no derivative of the node reads may be stand-ins (see
    :func:`check_graph`); without it (to recompute values), only true values are used."""
    from ..ops._opnode import PackedSaved
    from .node import is_released

    op = node._op
    saved = node._saved
    if is_released(saved):
        return "its saved values were freed by a backward pass (use retain_graph=True)"
    if type(saved) is PackedSaved:
        return "its saved values went through saved_tensors_hooks"
    needs = tuple(m is not None for m in node._in_meta)
    read = set(op.save_plan(needs).inputs)  # tensor arguments the node's derivatives read
    # A kept argument tuple has every number; tensors no derivative read are None in it.
    args = list(saved) if saved is not None else [_UNKNOWN] * len(op.param_names)
    stand_ins = rng is not None and node._result is None
    input_index = {pos: i for i, pos in enumerate(op.input_pos)}
    unknown_numbers = []
    for pos, value in enumerate(args):
        if isinstance(value, Tensor):
            args[pos] = value._data
            continue
        if type(value) is tuple and pos in op.tensor_list_pos:
            args[pos] = tuple(e._data if isinstance(e, Tensor) else e for e in value)
            continue
        name = op.param_names[pos]
        if pos not in input_index and pos not in op.tensor_param_pos:
            if value is _UNKNOWN:
                unknown_numbers.append(pos)
            continue
        if value is None and pos in read:
            continue  # read, so it would have been saved: it really was None
        if value is not None and value is not _UNKNOWN:
            continue  # a number given for a tensor argument
        i = input_index.get(pos)
        edge = node.next_functions[i] if i is not None else (None, 0)
        known = values.get(edge) if edge[0] is not None else None
        if known is not None:
            args[pos] = known
        elif rng is None or not stand_ins:
            return f"its argument {name!r} was not saved and is not known otherwise"
        elif i is not None and node._in_meta[i] is not None:
            shape, dtype = node._in_meta[i][:2]
            args[pos] = rng.standard_normal(shape).astype(dtype)
        elif i is not None and op.defaults[pos] is not None:
            args[pos] = 0.0
        else:
            args[pos] = None
    required = _required_marker()
    for pos in list(unknown_numbers):
        if stand_ins and op.defaults[pos] is not required:
            args[pos] = op.defaults[pos]
            unknown_numbers.remove(pos)
    if len(unknown_numbers) > 1:
        return f"its argument {op.param_names[unknown_numbers[0]]!r} was not saved"
    if unknown_numbers:
        inferred = _infer_from_output_shape(node, args, unknown_numbers[0], shapes)
        if inferred is _UNKNOWN:
            return f"its argument {op.param_names[unknown_numbers[0]]!r} was not saved"
        args[unknown_numbers[0]] = inferred
    return args


def _infer_from_output_shape(
    node: Any, args: list[Any], pos: int, shapes: dict[tuple[Node, int], tuple]
) -> Any:
    """A number argument no derivative reads (``view``'s size, ``unsqueeze``'s dim), found as
    the value that makes the forward produce the output shape the graph recorded. Accepted
    only if every such value gives the same output."""
    shape = shapes.get((node, 0))
    if shape is None:
        return _UNKNOWN
    ndim = max([len(shape)] + [np.ndim(a) for a in args if isinstance(a, np.ndarray)])
    candidates: list[Any] = [shape]
    candidates += [shape[k:] for k in range(1, len(shape))]
    candidates += list(range(-ndim - 1, ndim + 1))
    found = _UNKNOWN
    found_out = None
    for candidate in candidates:
        trial = list(args)
        trial[pos] = candidate
        try:
            with np.errstate(all="ignore"):
                out = _forward_outputs(node._op, trial)[0]
        except Exception:  # noqa: BLE001 - most candidates are not valid arguments
            continue
        if out.shape != shape:
            continue
        if found_out is None:
            found, found_out = candidate, out
        elif not np.array_equal(out, found_out):
            return _UNKNOWN  # ambiguous
    return found


def _required_marker() -> Any:
    """The registry's marker for parameters without a default."""
    from ..ops._dispatch import _REQUIRED_MARK

    return _REQUIRED_MARK[0]


def _forward_outputs(op: Any, args: list[Any]) -> list[np.ndarray]:
    """The op's differentiable outputs at ``args``, as arrays."""
    out = op.forward(*args)
    if op.multi_output:
        outs = list(out)
        return [np.asarray(o) for o in outs[: len(outs) - op.nondiff_outputs]]
    return [np.asarray(out)]


def _as_float64(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.dtype.kind in "fV":
        return value.astype(np.float64)
    return value


def _unit(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    u = rng.standard_normal(shape)
    norm = np.sqrt(np.sum(u * u))
    return u / norm if norm else u


def _check_node(
    index: int, node: Node, values: dict[tuple[Node, int], np.ndarray],
    shapes: dict[tuple[Node, int], tuple], eps: float, atol: float, rtol: float,
    rng: np.random.Generator,
) -> NodeCheck:
    from ..ops._opnode import OpNode

    if not isinstance(node, OpNode):
        if _is_custom(node):
            return NodeCheck(index, node, "unchecked", "a custom Function (use gradcheck on it)")
        return NodeCheck(index, node, "unchecked", "not an op-table node")
    if node.name() in _READS_STORAGE:
        return NodeCheck(index, node, "unchecked",
                         "its forward reads the input's storage, which a copy does not have")
    args = _forward_args(node, values, shapes, rng)
    if isinstance(args, str):
        return NodeCheck(index, node, "unchecked", args)
    op = node._op
    try:
        outs = _forward_outputs(op, args)  # at the recorded dtypes: the gradients' dtypes
    except Exception as error:  # noqa: BLE001
        return NodeCheck(index, node, "unchecked", f"its forward failed to re-run ({error})")
    if any(o.dtype.kind == "c" for o in outs) or any(
        isinstance(a, np.ndarray) and a.dtype.kind == "c" for a in args
    ):
        return NodeCheck(index, node, "unchecked", "complex values")
    vs = [_unit(rng, o.shape) for o in outs]
    incoming = [v.astype(o.dtype) for v, o in zip(vs, outs, strict=True)]
    try:
        sent = node.apply(incoming[0] if node._n_out == 1 else incoming, False)
    except Exception as error:  # noqa: BLE001
        return NodeCheck(index, node, "unchecked", f"its backward failed ({error})")
    point = [_as_float64(a) for a in args]

    def projected(pos: int, x: np.ndarray) -> float:
        """``v . f(point with argument pos = x)``, summed over outputs."""
        shifted = list(point)
        shifted[pos] = x
        return sum(
            float(np.sum(np.asarray(o, dtype=np.float64) * v))
            for o, v in zip(_forward_outputs(op, shifted), vs, strict=True)
        )

    for i, pos in enumerate(op.input_pos):
        meta = node._in_meta[i]
        if meta is None or sent[i] is None:
            continue
        name = op.param_names[pos]
        g = engine.sum_to_shape(np.asarray(sent[i], dtype=np.float64), meta[0])
        x = np.asarray(point[pos], dtype=np.float64)
        if g is None or g.shape != x.shape:
            reason = f"has shape {list(np.shape(sent[i]))}, expected {list(x.shape)}"
            return NodeCheck(index, node, "mismatch", reason, i, name)
        u = _unit(rng, x.shape)
        numerical = (projected(pos, x + eps * u) - projected(pos, x - eps * u)) / (2 * eps)
        analytical = float(np.sum(g * u))
        tolerance = atol * float(np.sum(np.abs(u))) * sum(float(np.sum(np.abs(v))) for v in vs)
        if abs(analytical - numerical) > tolerance + rtol * abs(numerical):
            if x.size <= 64:  # small: show the whole gradient, element by element
                full = np.zeros(x.shape)
                for idx in np.ndindex(*x.shape):
                    e = np.zeros(x.shape)
                    e[idx] = eps
                    full[idx] = (projected(pos, x + e) - projected(pos, x - e)) / (2 * eps)
                return NodeCheck(index, node, "mismatch", "", i, name, full, g)
            return NodeCheck(index, node, "mismatch", "", i, name, np.asarray(numerical),
                             np.asarray(analytical))
    return NodeCheck(index, node, "ok")


#: Nodes of ops whose result depends on the memory around their input (``as_strided`` views
#: the storage): re-running the forward on a copy of the input would compute something else.
_READS_STORAGE = frozenset({"AsStridedBackward0", "AsStridedBackward1"})


def _is_custom(node: Node) -> bool:
    from .function import BackwardCFunction

    return isinstance(node, BackwardCFunction)


# ``chainrule.autograd.gradcheck`` names the function (as in PyTorch) but is also this module
# once something imports it as a module; calling the module calls the function.
class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> bool:
        return gradcheck(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
