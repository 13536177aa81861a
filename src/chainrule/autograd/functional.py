"""``autograd.functional``: Jacobians, Hessians and their products, as in PyTorch.

Every function takes ``func`` (Tensors in, a Tensor or a tuple of Tensors out) and ``inputs``
(a Tensor or a tuple of Tensors), and returns results shaped like PyTorch's: a single Tensor when
``inputs``/outputs are single Tensors, tuples (of tuples) otherwise.

All of it is reverse mode on top of ``autograd.grad``:

* ``vjp`` is one backward pass; ``jvp`` uses the double-backward trick (the vjp is linear in
  its cotangent, so differentiating it with respect to that cotangent gives the jvp);
* ``jacobian`` is one backward pass per output element; ``hessian`` is the Jacobian of the
  Jacobian; ``vhp`` and ``hvp`` differentiate the gradient once more.

``vectorize=True`` runs one backward pass for all rows of the Jacobian, as PyTorch: the rows of
an identity are a batch of cotangents (``autograd.grad(..., is_grads_batched=True)``, which runs
under vmap). ``strategy="forward-mode"`` (which PyTorch only supports with ``vectorize=True``)
pushes a batch of tangents through the double-backward graph of ``jvp`` the same way instead of
using forward-mode AD; results equal PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._tensor import Tensor
from . import engine
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

Tensors = Tensor | tuple[Tensor, ...]


# ----------------------------------------------------------------------------------------------
# Helpers (PyTorch's, with its error messages)


def _as_tuple(inp: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Tensor, ...]]:
    """``(was it a tuple, the tuple)``, checking every element is a Tensor."""
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but {where} has type {type(el)}."
            )
    return is_tuple, inp


def _tuple_postprocess(res: Any, to_unpack: bool | tuple[bool, bool]) -> Any:
    """Unpack one-element tuples where the caller passed a single Tensor."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs: Sequence[Tensor], create_graph: bool, need_graph: bool) -> tuple:
    """Fresh tensors to differentiate with respect to: views keeping the user's graph when the
    result must be differentiable (``create_graph``), detached copies otherwise."""
    result = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            result.append(inp.view_as(inp))
        else:
            result.append(inp.detach().requires_grad_(need_graph))
    return tuple(result)


def _grad_postprocess(inputs: Any, create_graph: bool) -> Any:
    if isinstance(inputs[0], Tensor):
        if not create_graph:
            return tuple(inp.detach() for inp in inputs)
        return inputs
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v: Sequence[Tensor], other: Sequence[Tensor], is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other, strict=True)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}."
            )


def _check_requires_grad(inputs: Sequence[Tensor | None], input_type: str, strict: bool) -> None:
    """Strict mode: every output (or gradient, Jacobian ...) must depend on the inputs."""
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode."
            )
        if inp.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs."
            )
        if input_type == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)."
            )
        if input_type == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in strict "
            "mode."
        )


def _autograd_grad(
    outputs: Sequence[Tensor | None],
    inputs: Sequence[Tensor],
    grad_outputs: Sequence[Tensor | None] | None = None,
    create_graph: bool = False,
    retain_graph: bool | None = None,
    is_grads_batched: bool = False,
) -> tuple[Tensor | None, ...]:
    """``autograd.grad`` over the outputs that require grad (None for unused inputs)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs = []
    new_grad_outputs = []
    for out, grad_out in zip(outputs, grad_outputs, strict=True):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_grad_outputs.append(grad_out)
    if not new_outputs:
        return (None,) * len(inputs)
    return engine.grad(
        new_outputs,
        inputs,
        new_grad_outputs,
        allow_unused=True,
        create_graph=create_graph,
        retain_graph=retain_graph,
        is_grads_batched=is_grads_batched,
    )


_ZERO_FILL_MESSAGES = {
    "back": (
        "The output of the user-provided function is independent of input {i}. This is not "
        "allowed in strict mode."
    ),
    "back_trick": (
        "The gradient with respect to the input is independent of entry {i} in the grad_outputs "
        "when using the double backward trick to compute forward mode gradients. This is not "
        "allowed in strict mode."
    ),
    "double_back": (
        "The jacobian of the user-provided function is independent of input {i}. This is not "
        "allowed in strict mode."
    ),
    "double_back_trick": (
        "The hessian of the user-provided function is independent of entry {i} in the "
        "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
        "backward trick to replace forward mode AD."
    ),
}


def _fill_in_zeros(
    grads: Sequence[Tensor | None],
    refs: Sequence[Tensor],
    strict: bool,
    create_graph: bool,
    stage: str,
) -> tuple[Tensor, ...]:
    """Zeros for gradients that are None (the mathematical value), or strict mode's errors."""
    from ..ops.creation import zeros_like

    result = []
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                raise RuntimeError(_ZERO_FILL_MESSAGES[stage].format(i=i))
            grads_i = zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode when create_graph=True."
            )
        result.append(grads_i)
    return tuple(result)


def _check_v_or_single_element(v: Any, inputs: Sequence[Tensor], message: str) -> None:
    if v is None and (len(inputs) != 1 or inputs[0].nelement() != 1):
        raise RuntimeError(message)


# ----------------------------------------------------------------------------------------------
# Products


def vjp(
    func: Callable[..., Any],
    inputs: Tensors,
    v: Tensors | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    ``v`` may be omitted when ``func`` returns a single one-element Tensor.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.autograd.functional import vjp
        >>> def adder(x, y):
        ...     return 2 * x + 3 * y
        >>> vjp(adder, (torch.ones(2), torch.ones(2)), torch.ones(2))
        (tensor([5., 5.]), (tensor([2., 2.]), tensor([3., 3.])))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "vjp"
        )
        _check_requires_grad(outputs, "outputs", strict=strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError(
                "The vector v can only be None if the user-provided function returns a single "
                "Tensor with a single element."
            )
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (
        _tuple_postprocess(outputs, is_outputs_tuple),
        _tuple_postprocess(result, is_inputs_tuple),
    )


def jvp(
    func: Callable[..., Any],
    inputs: Tensors,
    v: Tensors | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product at ``inputs``.

    Computed with the double-backward trick, as PyTorch's ``autograd.functional.jvp`` does.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.autograd.functional import jvp
        >>> def adder(x, y):
        ...     return 2 * x + 3 * y
        >>> jvp(adder, (torch.ones(2), torch.ones(2)), (torch.ones(2), torch.ones(2)))
        (tensor([5., 5.]), tensor([5., 5.]))
    """
    from ..ops.creation import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple)
        else:
            _check_v_or_single_element(
                v,
                inputs,
                "The vector v can only be None if the input to the user-provided function is a "
                "single Tensor with a single element.",
            )
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jvp"
        )
        _check_requires_grad(outputs, "outputs", strict=strict)
        # The vjp u -> u^T J, recorded: it is linear in u, so d(u^T J v)/du = J v.
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (
        _tuple_postprocess(outputs, is_outputs_tuple),
        _tuple_postprocess(result, is_outputs_tuple),
    )


# ----------------------------------------------------------------------------------------------
# Jacobian and Hessian


def jacobian(
    func: Callable[..., Any],
    inputs: Tensors,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` has shape
    ``outputs[i].shape + inputs[j].shape`` (tuples collapse as in PyTorch).

    ``vectorize=True`` computes all rows in one backward pass under vmap, as PyTorch.
    ``strategy="forward-mode"`` needs ``vectorize=True``, as in PyTorch; its columns are
    computed with the double-backward ``jvp``, all at once.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.autograd.functional import jacobian
        >>> jacobian(lambda x: x ** 2, torch.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _jacobian_forward(func, inputs, strict, vectorize)

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jacobian"
        )
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                "supported together. Please either set `strict=False` or `vectorize=False`."
            )
        if vectorize:
            jac = _jacobian_batched(outputs, inputs, create_graph)
        else:
            jac = tuple(
                _jacobian_rows(i, out, inputs, create_graph, strict)
                for i, out in enumerate(outputs)
            )
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_rows(
    i: int, out: Tensor, inputs: tuple[Tensor, ...], create_graph: bool, strict: bool
) -> tuple[Tensor, ...]:
    """The Jacobians of output ``i`` with respect to every input: one backward pass per
    element of the output (PyTorch differentiates ``out.reshape(-1)[j]``; a one-hot gradient
    gives the same row)."""
    from ..ops.creation import zeros, zeros_like
    from ..ops.shape import stack

    rows: list[list[Tensor]] = [[] for _ in inputs]
    flat_size = out.nelement()
    for j in range(flat_size):
        one_hot = zeros(flat_size, dtype=out.dtype)
        one_hot._data[j] = 1
        vj = _autograd_grad(
            (out,),
            inputs,
            (one_hot.reshape(out.shape),),
            retain_graph=True,
            create_graph=create_graph,
        )
        for el_idx, (vj_el, inp_el) in enumerate(zip(vj, inputs, strict=True)):
            if vj_el is not None:
                if strict and create_graph and not vj_el.requires_grad:
                    raise RuntimeError(
                        "The jacobian of the user-provided function is independent of input "
                        f"{i}. This is not allowed in strict mode when create_graph=True."
                    )
                rows[el_idx].append(vj_el)
            else:
                if strict:
                    raise RuntimeError(
                        f"Output {i} of the user-provided function is independent of input "
                        f"{el_idx}. This is not allowed in strict mode."
                    )
                rows[el_idx].append(zeros_like(inp_el))
    return tuple(
        stack(rows_el, 0).view(out.size() + inputs[el_idx].size())
        for el_idx, rows_el in enumerate(rows)
    )


def _jacobian_batched(
    outputs: tuple[Tensor, ...], inputs: tuple[Tensor, ...], create_graph: bool
) -> tuple[tuple[Tensor, ...], ...]:
    """``vectorize=True``: as PyTorch, one backward pass whose cotangents are a batch, the rows
    of an identity spanning all outputs at once (``autograd.grad(..., is_grads_batched=True)``,
    which runs the pass under vmap)."""
    numels = [out.nelement() for out in outputs]
    total = sum(numels)
    flat_outputs = tuple(out.reshape(-1) for out in outputs)
    # (no outputs' elements: PyTorch's IndexError from the batch of no cotangents)
    basis = _identity_blocks(total, numels, [out.dtype for out in outputs])
    vj = _autograd_grad(
        flat_outputs, inputs, basis, create_graph=create_graph, is_grads_batched=True
    )
    stacked_rows = [
        _zeros_batch(inp, total) if vj_el is None else vj_el
        for vj_el, inp in zip(vj, inputs, strict=True)
    ]
    jac_by_input = []
    for stacked, inp in zip(stacked_rows, inputs, strict=True):
        start = 0
        per_output = []
        for numel, out in zip(numels, outputs, strict=True):
            per_output.append(stacked[start : start + numel].view(out.size() + inp.size()))
            start += numel
        jac_by_input.append(tuple(per_output))
    return tuple(zip(*jac_by_input, strict=True))


def _zeros_batch(inp: Tensor, size: int) -> Tensor:
    """Zeros of ``inp``'s shape, expanded to a batch of ``size`` (an input no output reaches)."""
    from ..ops.creation import zeros_like

    return zeros_like(inp).expand((size, *inp.shape))


def _identity_blocks(total: int, numels: list[int], dtypes: list[Any]) -> list[Tensor]:
    """The identity of size ``total`` cut into column blocks of ``numels`` (one per flattened
    tensor, in its dtype): row ``k`` is the ``k``-th basis vector of the concatenation."""
    from ..ops.creation import eye

    identity = eye(total)
    blocks = []
    start = 0
    for numel, dtype in zip(numels, dtypes, strict=True):
        blocks.append(identity[:, start : start + numel].to(dtype))
        start += numel
    return blocks


def _jacobian_forward(
    func: Callable[..., Any], inputs: Tensors, strict: bool, vectorize: bool
) -> Any:
    """``strategy="forward-mode"``: the Jacobian-vector products of every input element."""
    from ..ops.creation import zeros, zeros_like

    if strict:
        raise RuntimeError(
            'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
            "are not supported together (yet). Please either set `strict=False` or "
            '`strategy="reverse-mode"`.'
        )
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
            "implemented for `vectorize=True`."
        )
    with enable_grad():
        x = _grad_preprocess(inputs, create_graph=False, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*x), "outputs", "jacobian")
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, x, grad_outputs, create_graph=True)
    # Every column at once: the tangents are a batch, the rows of an identity spanning all
    # input elements, pushed through the double-backward graph in one vmapped pass.
    numels = [inp.nelement() for inp in inputs]
    total = sum(numels)
    jac: list[list[Tensor]] = [[] for _ in outputs]  # (lists: PyTorch's forward-mode path's)
    if total:
        tangents = [
            block.reshape(total, *inp.shape)
            for block, inp in zip(
                _identity_blocks(total, numels, [t.dtype for t in inputs]), inputs, strict=True
            )
        ]
        jv = _autograd_grad(
            grad_inputs, grad_outputs, tangents, retain_graph=True, is_grads_batched=True
        )
    for i, out in enumerate(outputs):
        start = 0
        for inp, numel in zip(inputs, numels, strict=True):
            if total == 0 or jv[i] is None:
                jac[i].append(zeros(out.shape + inp.shape, dtype=out.dtype))
            else:
                rows = jv[i].detach()[start : start + numel]
                jac[i].append(rows.movedim(0, -1).reshape(out.shape + inp.shape))
            start += numel
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(
    func: Callable[..., Any],
    inputs: Tensors,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a scalar ``func`` at ``inputs``: ``H[i][j]`` has shape
    ``inputs[i].shape + inputs[j].shape``.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.autograd.functional import hessian
        >>> hessian(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp: Tensor) -> Tensor:
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    def jac_func(*inp: Tensor) -> Any:
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(
        jac_func,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_gradient(
    func: Callable[..., Any],
    inputs: Tensors,
    v: Tensors | None,
    create_graph: bool,
    strict: bool,
    name: str,
) -> tuple[bool, tuple, tuple, Any, bool, tuple]:
    """Shared start of ``vhp`` and ``hvp``: checked inputs, outputs and the recorded gradient."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    else:
        _check_v_or_single_element(
            v,
            inputs,
            "The vector v can only be None if the input to the user-provided function is a "
            "single Tensor with a single element.",
        )
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {name} should contain a single element"
        )
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, outputs, v, is_outputs_tuple, jac


def vhp(
    func: Callable[..., Any],
    inputs: Tensors,
    v: Tensors | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a scalar ``func``.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.autograd.functional import vhp
        >>> vhp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.ones(2))
        (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs, outputs, v, is_outputs_tuple, jac = _scalar_function_gradient(
            func, inputs, v, create_graph, strict, "vhp"
        )
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (
        _tuple_postprocess(outputs, is_outputs_tuple),
        _tuple_postprocess(result, is_inputs_tuple),
    )


def hvp(
    func: Callable[..., Any],
    inputs: Tensors,
    v: Tensors | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a scalar ``func`` (via the double-backward trick, as
    PyTorch; equal to ``vhp`` when the Hessian is symmetric).

    Example:
        >>> import chainrule as torch
        >>> from chainrule.autograd.functional import hvp
        >>> hvp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.ones(2))
        (tensor(9.), tensor([ 6., 12.]))
    """
    from ..ops.creation import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs, outputs, v, is_outputs_tuple, jac = _scalar_function_gradient(
            func, inputs, v, create_graph, strict, "hvp"
        )
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (
        _tuple_postprocess(outputs, is_outputs_tuple),
        _tuple_postprocess(result, is_inputs_tuple),
    )
