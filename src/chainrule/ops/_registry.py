"""The op table's machinery: declare an op once, with its NumPy forward and one derivative per
differentiable input beside it; this module does all the plumbing around them.

    @op("MulBackward0", inputs=("self", "other"), promote=ARITH)
    def mul(self, other):
        return self * other

    @mul.derivative("self")
    def _(ops, grad, other):
        return grad * other

    @mul.derivative("other")
    def _(ops, grad, self):
        return grad * self

What the machinery does, so no op has to:

* binds arguments to the forward's signature (positional fast path, keywords when given);
* unwraps tensors, applies PyTorch's type promotion, runs the forward, wraps the result;
* when grad mode is on and an input requires grad, creates the node (named as in PyTorch,
  ``next_functions`` from the inputs) and saves what the needed derivatives ask for, and only
  that: a derivative's parameter names (after ``ops`` and ``grad``) say which forward arguments,
  or ``result``, it reads;
* in backward, checks saved tensors' versions, unpacks them (arrays on the fast path, Tensors
  when ``create_graph=True``) and calls the derivatives with ``ops``: a namespace of torch-style
  helpers over ndarrays (fast path) or over Tensors (recorded, so derivatives are differentiable).

Broadcast gradients are reduced to each input's shape by the engine, once: a derivative returns
the gradient at the broadcast shape. A derivative returns either a new array or a view of
``grad``; it never returns a saved value itself (the engine may hand a new array to a leaf's
``.grad`` without copying).

Tensor methods are declared where their function is: ``@op(..., method=True, inplace=True)``
gives ``Tensor.mul`` and ``Tensor.mul_``, :func:`tensor_method` does the same for a public
function that is not an op, and ops/__init__.py attaches what was declared.
"""

from __future__ import annotations

import copy
import functools
import inspect
import operator
import sys
import types
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import numpy as np

from .._dtype import no_kernel
from .._tensor import Tensor
from . import _dispatch
from ._dispatch import ARITH, COMPARE, FLOAT, KEEP, make_public_function
from ._opnode import OpNode, bind_namespaces, make_node_class

__all__ = [
    "op", "OpDef", "OpNode", "recorded_as", "zero_derivative", "as_method", "ARITH", "FLOAT",
    "COMPARE", "KEEP", "bind_namespaces", "tensor_method", "declare_methods", "declared_methods",
    "InPlaceSource", "allow_complex", "refuses_complex", "exact_on_arrays",
]


def exact_on_arrays(derivative: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a derivative whose array path (the eager backward's) computes otherwise than its
    formula on tensors (``create_graph``'s): a fused kernel's accumulation order or dtype. A
    graph compiler runs it on the arrays, opaque, so that compiled gradients are eager's to
    the bit (``ir.backward``)."""
    derivative.exact_on_arrays = True  # type: ignore[attr-defined]
    return derivative


class _Derivative:
    """One derivative: the function, and which environment entries it reads."""

    __slots__ = ("fn", "arg_index", "gather", "single")

    def __init__(self, fn: Callable[..., Any], arg_index: tuple[int, ...]) -> None:
        self.fn = fn
        self.arg_index = arg_index
        self.gather = _gatherer(arg_index)
        self.single = arg_index[0] if len(arg_index) == 1 else None  # the common one-argument case


def _no_arguments(env: list[Any]) -> tuple[()]:
    return ()


def _gatherer(index: tuple[int, ...]) -> Callable[[list[Any]], tuple]:
    """A fast ``env -> tuple(env[i] for i in index)``."""
    if not index:
        return _no_arguments
    if len(index) == 1:
        getter = operator.itemgetter(index[0])

        def gather_one(env: list[Any]) -> tuple:
            return (getter(env),)

        return gather_one
    return operator.itemgetter(*index)


class SavePlan:
    """What a node saves for one combination of inputs that need grad."""

    __slots__ = ("inputs", "save_result", "keep_args", "drop", "lists", "pack_order")

    def __init__(self, inputs: tuple[int, ...], save_result: bool, keep_args: bool,
                 drop: tuple[int, ...], lists: frozenset[int], pack_order: tuple[int, ...]
                 ) -> None:
        self.inputs = inputs  # positions of saved tensor (or number) inputs and tensor params
        self.save_result = save_result
        self.keep_args = keep_args  # the node keeps the argument tuple
        self.drop = drop  # tensor positions replaced by None in the kept tuple
        self.lists = lists  # which of ``inputs`` are tensor lists (``tensor_lists``)
        # ``inputs`` in the order PyTorch saves them, which is what saved_tensors_hooks see:
        # by argument name (its generated code sorts them), then the output.
        self.pack_order = pack_order


class OpDef:
    """An entry of the op table."""

    # PyTorch's mul and div compute a half-precision tensor with a 0-d tensor of a wider
    # float as ``other`` as with a number (in float32, the scalar not rounded to the half type
    # first); as ``self`` the 0-d tensor is rounded, as by every other op.
    half_takes_scalar_tensors = False
    # How ``out=`` is checked and written (``out_arguments.SAME`` ...); None: no ``out=``.
    out_rule: str | None = None
    # On meta tensors: a forward that returns an array of the result's shape and dtype without
    # computing it (zero-strided), for ops whose inputs may be too large to compute on.
    meta_forward: Callable[..., Any] | None = None

    def __init__(
        self,
        forward: Callable[..., Any],
        node_name: str,
        inputs: Sequence[str],
        promote: str,
        tensor_params: Sequence[str],
        differentiable: bool,
        num_outputs: int,
        nondiff_outputs: int,
        promote_with: Sequence[str] = (),
        view: bool = False,
        signatures: Sequence[str] = (),
        check: Callable[..., None] | None = None,
        multi_view: bool = False,
        tensor_lists: Sequence[str] = (),
        saved_outputs: Sequence[str] = (),
        tensor_only: Sequence[str] = (),
        saved_constants: dict[str, Any] | None = None,
        elementwise: bool = False,
        node_outputs: Sequence[str] = (),
        half_native: bool = False,
        half_rounds_numbers: bool = False,
        complex_ok: bool = False,
        not_differentiable: Sequence[str] = (),
    ) -> None:
        self.forward = _positional(forward)
        # Called with the unwrapped arguments before type promotion, on every path (for errors
        # that depend on the operands' own dtypes, e.g. subtraction of bools).
        self.check = check
        self.name = forward.__name__
        self.node_name = node_name
        # PyTorch's overload signatures, quoted in its error for arguments that match none.
        self.signatures = tuple(signatures)
        # The forward as declared (keyword-only parameters kept): the public function's
        # ``__signature__``, which ``help()`` and the type stub generator read.
        self.signature = inspect.signature(forward)
        params = list(self.signature.parameters.values())
        self.param_names = tuple(p.name for p in params)
        self.defaults = tuple(
            p.default if p.default is not inspect.Parameter.empty else _REQUIRED for p in params
        )
        self.index_of = {name: i for i, name in enumerate(self.param_names)}
        self.input_names = tuple(inputs)
        self.input_pos = tuple(self.index_of[name] for name in inputs)
        self.n_inputs = len(self.input_pos)
        # Tensor lists (advanced indexing's ``indices``): tuples of tensors (or None), unwrapped
        # to tuples of arrays, saved tensor by tensor (version-checked, packed) as PyTorch saves
        # a TensorList.
        self.tensor_list_pos = tuple(self.index_of[name] for name in tensor_lists)
        self.tensor_param_pos = (
            tuple(self.index_of[name] for name in (*tensor_params, *saved_outputs))
            + self.tensor_list_pos
        )
        # Tensor arguments that are outputs of PyTorch's forward (layer norm's mean and rstd,
        # max pooling's indices, nll's total_weight), computed by the public function before
        # the op runs: PyTorch packs saved outputs after the saved inputs.
        self.saved_output_pos = frozenset(self.index_of[name] for name in saved_outputs)
        # Tensor arguments PyTorch refuses to differentiate (its derivatives.yaml marks them
        # not implemented): one that requires grad while grad mode is on is an error, not a
        # silently dropped edge.
        self.refused_grad_pos = frozenset(self.index_of[name] for name in not_differentiable)
        # Saved outputs that PyTorch's node also returns (group norm's mean and rstd: its
        # outputs 1 and 2): saved_tensors_hooks and ``grad_fn._saved_<name>`` see them as
        # outputs of the node (requiring grad, ``grad_fn`` the node), position -> output_nr.
        self.node_output_nr = {self.index_of[name]: nr
                               for nr, name in enumerate(node_outputs, start=1)}
        self.node_outputs_derivative: _Derivative | None = None
        self.tensor_positions = frozenset(self.input_pos + self.tensor_param_pos)
        # bfloat16 (_dispatch.forward_in_float32): computed in float32 unless the forward
        # takes it as it is (``half_native``); Python numbers rounded to bfloat16 first
        # (``half_rounds_numbers``); an explicit ``dtype=`` argument decides the result's dtype
        # (such a result is not rounded back).
        self.half_native = half_native
        self.half_rounds_numbers = half_rounds_numbers
        self.dtype_pos = self.index_of.get("dtype")
        # A differentiable op whose ``dtype=`` can make its result an integer type (sum, cumsum,
        # prod ...): recording it then is PyTorch's "Autograd not support dtype" error. A
        # conversion (``x.to(torch.long)``) just records nothing.
        self.refuses_integral_result = (
            self.dtype_pos is not None and differentiable and node_name != "ToCopyBackward0"
        )
        # An element-wise op of several tensors (PyTorch's TensorIterator): its result is laid
        # out as TensorIterator lays it out over them, in parameter order.
        self.iterates = elementwise and len(self.tensor_positions) >= 2
        self.iterated_pos = tuple(sorted(self.tensor_positions))
        # Inputs PyTorch takes as tensors only (its Tensor overloads): a number is a TypeError.
        self.tensor_only_pos = frozenset(self.index_of[name] for name in tensor_only)
        # Numbers PyTorch's node saves that this forward has no parameter for (``alpha`` of
        # ``a + b``, always 1): shown as ``_saved_<name>``.
        self.saved_constants = dict(saved_constants or {})
        self.promote = promote
        # Numbers passed as non-tensor arguments that still take part in type promotion
        # (the exponent of ``x ** 2.5``, the bounds of ``clamp``).
        self.promote_pos = self.input_pos + tuple(self.index_of[n] for n in promote_with)
        self.view = view or multi_view
        # The op is one that returns several views (split, unbind; also when it returns one):
        # PyTorch forbids modifying them in place.
        self.multi_view = multi_view
        self.differentiable = differentiable
        # The allowlist of complex autograd: only an op declared ``complex_ok`` (its derivatives
        # conjugate where PyTorch's do, tested against PyTorch) records a node when an input or
        # the result is complex; every other op refuses (_dispatch.refuse_complex_gradient)
        # rather than differentiate complex values with real formulas.
        self.complex_ok = complex_ok
        # The allowlist of forward-mode AD: the op's JVP rule (ops/_forward.py), None for an op
        # that refuses a tensor with a tangent (PyTorch's NotImplementedError).
        self.jvp: Callable[..., Any] | None = None
        self.num_outputs = num_outputs  # differentiable outputs (1 for most ops; -1: variable)
        self.nondiff_outputs = nondiff_outputs  # trailing outputs that never get a grad_fn
        self.multi_output = num_outputs != 1 or nondiff_outputs != 0
        self.derivatives: list[_Derivative | None] = [None] * self.n_inputs
        self.result_index = len(self.param_names)
        self.blank_args = (None,) * len(self.param_names)
        self.uses_extras = False  # a derivative reads ``result`` or an input's shape/strides
        self.records_strides = False  # a derivative reads an input's strides (its layout)
        self._plans: dict[tuple[bool, ...], SavePlan] = {}
        # The generated recorders (ops/_recorder.py), by which inputs need grad.
        self.recorders: dict[tuple[bool, ...], Callable[..., Any]] = {}
        # The public function (False) and Tensor method (True) last made for this op: what a
        # ``__torch_function__`` is given as ``func`` when an argument overrides.
        self.publics: dict[bool, Callable[..., Any]] = {}
        # What any derivative reads (environment positions): PyTorch's node has a ``_saved_*``
        # attribute for each, None when this node did not need to save it.
        self.read_positions: frozenset[int] = frozenset()
        # Number arguments a derivative reads: readable after the node is released.
        self.kept_numbers: tuple[int, ...] = ()
        # One node output per differentiable output (a variable number: -1).
        self.multi_output_node = num_outputs > 1 or num_outputs == -1
        self.node_cls = make_node_class(node_name, self, self.multi_output_node)

    def __repr__(self) -> str:
        return f"<op {self.name} -> {self.node_name}>"

    def derivative(self, input_name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register the derivative for one differentiable input (by its parameter name)."""
        index = self.input_names.index(input_name)

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            names = list(inspect.signature(fn).parameters)[2:]
            arg_index = []
            for name in names:
                if name == "result":
                    arg_index.append(self.result_index)
                elif name.endswith("_shape") and name[: -len("_shape")] in self.input_names:
                    # The input's shape, known without saving the input itself.
                    position = self.input_names.index(name[: -len("_shape")])
                    arg_index.append(self.result_index + 1 + position)
                elif name.endswith("_strides") and name[: -len("_strides")] in self.input_names:
                    # The input's strides (its memory layout), recorded without saving it.
                    position = self.input_names.index(name[: -len("_strides")])
                    arg_index.append(self.result_index + 1 + self.n_inputs + position)
                    self.records_strides = True
                elif name in self.index_of:
                    arg_index.append(self.index_of[name])
                else:
                    raise TypeError(
                        f"derivative of {self.name}: unknown argument {name!r}; expected one of "
                        f"{self.param_names}, '<input>_shape', '<input>_strides' or 'result'"
                    )
            self.derivatives[index] = _Derivative(fn, tuple(arg_index))
            if any(i >= self.result_index for i in arg_index):
                self.uses_extras = True
            self._plans.clear()
            self.recorders.clear()
            self.read_positions = frozenset(
                i for d in self.derivatives if d is not None for i in d.arg_index
            )
            self.kept_numbers = tuple(sorted(
                p for p in self.read_positions
                if p < self.result_index and p not in self.tensor_positions))
            return fn

        return register

    def derivative_of_node_outputs(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register the first input's gradient from the gradients of the ``node_outputs``
        (a tuple, passed as ``grads``); the other parameters are read as a derivative's."""
        names = list(inspect.signature(fn).parameters)[2:]
        self.node_outputs_derivative = _Derivative(fn, tuple(self.index_of[n] for n in names))
        self.read_positions = self.read_positions | frozenset(
            self.node_outputs_derivative.arg_index)
        self._plans.clear()
        self.recorders.clear()
        return fn

    def save_plan(self, needs: tuple[bool, ...]) -> SavePlan:
        """What to save when the inputs flagged in ``needs`` require grad (cached)."""
        plan = self._plans.get(needs)
        if plan is None:
            used: set[int] = set()
            for i, need in enumerate(needs):
                d = self.derivatives[i]
                if need and d is not None:
                    used.update(d.arg_index)
            if needs[0] and self.node_outputs_derivative is not None:
                used.update(self.node_outputs_derivative.arg_index)
            tensor_pos = self.input_pos + self.tensor_param_pos
            saved = tuple(p for p in tensor_pos if p in used)
            # Tensor arguments no derivative reads are not kept alive by the node.
            drop = tuple(p for p in tensor_pos if p not in used)
            # Numbers any derivative reads are kept whatever needs grad, as PyTorch's nodes
            # save their scalars unconditionally (``x.sub(2, alpha=3).grad_fn._saved_alpha``).
            reads_numbers = any(p in self.read_positions for p in range(len(self.param_names))
                                if p not in self.tensor_positions)
            lists = frozenset(p for p in saved if p in self.tensor_list_pos)
            pack_order = tuple(sorted(
                saved, key=lambda p: (p in self.saved_output_pos, self.param_names[p])))
            plan = SavePlan(
                saved, self.result_index in used, bool(saved) or reads_numbers, drop, lists,
                pack_order,
            )
            self._plans[needs] = plan
        return plan

    def bind(self, args: tuple, kwargs: dict[str, Any]) -> tuple:
        """Positional and keyword arguments to one positional tuple, defaults filled in."""
        n_given = len(args)
        if n_given > len(self.param_names):
            raise TypeError(
                f"{self.name}() takes {len(self.param_names)} positional arguments but "
                f"{n_given} were given"
            )
        values = list(args) + list(self.defaults[n_given:])
        for key, value in kwargs.items():
            i = self.index_of.get(key)
            if i is None:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{key}'")
            if i < n_given:
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
            values[i] = value
        missing = [self.param_names[i] for i, v in enumerate(values) if v is _REQUIRED]
        if missing:
            if self.signatures:
                raise TypeError(self.invalid_arguments_message(args, kwargs))
            names = ", ".join(f'"{name}"' for name in missing)
            raise TypeError(
                f"{self.name}() missing {len(missing)} required positional arguments: {names}"
            )
        return tuple(values)

    def invalid_arguments_message(self, args: tuple, kwargs: dict[str, Any]) -> str:
        """PyTorch's message for a call that matches none of an op's overloads."""
        got = [_type_label(a) for a in args] + [f"{k}={_type_label(v)}" for k, v in kwargs.items()]
        lines = [
            f"{self.name}() received an invalid combination of arguments - got "
            f"({', '.join(got)}), but expected one of:"
        ]
        lines.extend(f" * {signature}" for signature in self.signatures)
        return "\n".join(lines) + "\n"


def _positional(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The same function with its keyword-only parameters made positional.

    The public function keeps PyTorch's signature (``add(a, b, *, alpha=1)``) and binds it;
    the machinery then calls the forward with one positional tuple, which is cheaper than
    building a keyword dict on every call.
    """
    code = fn.__code__
    if not code.co_kwonlyargcount:
        return fn
    names = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    kwdefaults = fn.__kwdefaults__ or {}
    new_code = code.replace(
        co_argcount=code.co_argcount + code.co_kwonlyargcount, co_kwonlyargcount=0
    )
    defaults = tuple(fn.__defaults__ or ())
    if not all(name in kwdefaults for name in names):
        raise TypeError(f"{fn.__name__}: keyword-only parameters of a forward need defaults")
    # __defaults__ covers the last parameters, which are now the former keyword-only ones.
    defaults = defaults + tuple(kwdefaults[name] for name in names)
    positional = types.FunctionType(new_code, fn.__globals__, fn.__name__, defaults, fn.__closure__)
    positional.__doc__ = fn.__doc__
    return positional


def _type_label(value: Any) -> str:
    if isinstance(value, Tensor):
        return "Tensor"
    return type(value).__name__


class _Required:
    def __repr__(self) -> str:
        return "<required>"


_REQUIRED: Any = _Required()
_dispatch._REQUIRED_MARK[0] = _REQUIRED


# ----------------------------------------------------------------------------------------------
# Declaring ops

def op(
    node_name: str,
    *,
    inputs: Sequence[str] = ("self",),
    promote: str = KEEP,
    tensor_params: Sequence[str] = (),
    differentiable: bool = True,
    num_outputs: int = 1,
    nondiff_outputs: int = 0,
    promote_with: Sequence[str] = (),
    view: bool = False,
    signatures: Sequence[str] = (),
    check: Callable[..., None] | None = None,
    multi_view: bool = False,
    tensor_lists: Sequence[str] = (),
    saved_outputs: Sequence[str] = (),
    name: str | None = None,
    tensor_only: Sequence[str] = (),
    saved_constants: dict[str, Any] | None = None,
    elementwise: bool = False,
    node_outputs: Sequence[str] = (),
    half_native: bool = False,
    half_rounds_numbers: bool = False,
    complex_ok: bool = False,
    not_differentiable: Sequence[str] = (),
    method: bool | Callable[..., Any] = False,
    inplace: bool | InPlaceSource = False,
    aliases: Sequence[str] = (),
) -> Callable[[Callable[..., Any]], OpFunction]:
    """Declare an op: decorate its NumPy forward; returns the public function.

    ``inputs`` names the differentiable tensor arguments (each gets a ``next_functions`` entry);
    ``tensor_params`` names other tensor arguments (indices, masks) that are unwrapped to arrays
    but get no edge. ``num_outputs`` > 1 (or -1 for a variable number) makes a multi-output node;
    ``nondiff_outputs`` counts trailing outputs that are never differentiable (e.g. indices).
    ``promote_with`` names number arguments that take part in type promotion; ``view=True``
    marks ops whose result shares memory (and the version counter) with ``self``;
    ``multi_view=True`` ops whose results are views PyTorch makes as several outputs of one
    node (split, unbind), which may not be modified in place; ``tensor_lists`` names
    arguments that are tuples of tensors (or None), like advanced indexing's ``indices``;
    ``saved_outputs`` names tensor arguments that stand for non-differentiable outputs of
    PyTorch's forward (computed by the public function and passed in), which are packed after
    the saved inputs, as PyTorch packs its saved outputs. ``name`` is the function PyTorch's
    argument errors name (default: the forward's name), for a forward named after an overload
    (``_add_alpha`` is ``add``). ``tensor_only`` names inputs that may not be Python numbers
    (PyTorch has no Scalar overload for them: ``atan2(x, 1.5)`` is a TypeError).
    ``saved_constants`` are numbers PyTorch's node saves that the forward takes no parameter
    for (``{"alpha": 1}`` for ``a + b``), shown as ``grad_fn._saved_<name>``.
    ``elementwise=True`` marks an element-wise op (a TensorIterator op in PyTorch): with
    several tensor arguments, its result's memory layout follows theirs as PyTorch's does.
    ``node_outputs`` names ``saved_outputs`` that PyTorch's node returns as outputs 1, 2 ...
    (group norm's mean and rstd): they are saved, packed and shown as outputs of the node.
    bfloat16 arguments are computed in float32 and the result rounded once (``_bfloat16``),
    unless ``half_native=True``: the forward rounds as PyTorch's kernel does itself (add with
    ``alpha``); ``half_rounds_numbers=True`` rounds Python numbers to bfloat16 first, as
    PyTorch's add and sub kernels do.
    ``complex_ok=True`` puts the op on the allowlist of complex autograd: its derivatives are
    PyTorch's for complex inputs and results (conjugate Wirtinger convention, ``conj`` where
    PyTorch's formulas have it) and are tested against PyTorch; any other op refuses to record
    a node when an input or its result is complex.
    ``not_differentiable`` names ``tensor_params`` PyTorch refuses to take with
    ``requires_grad=True`` while grad mode is on ("The function 'nll_loss_forward' is not
    differentiable with respect to argument 'weight'"): ``name`` is the function it names.
    ``method``, ``inplace`` and ``aliases`` declare ``Tensor.<name>`` and ``Tensor.<name>_``
    under the op's name, as :func:`tensor_method` does for a plain function
    (``@op("ExpBackward0", promote=FLOAT, method=True, inplace=True)``).
    """
    declares_methods = method is not False or inplace is not False
    if aliases and not declares_methods:
        raise TypeError(f"op {node_name}: aliases= without method= or inplace=")

    def declare(forward: Callable[..., Any]) -> OpFunction:
        opdef = OpDef(
            forward, node_name, inputs, promote, tensor_params, differentiable, num_outputs,
            nondiff_outputs, promote_with, view, signatures, check, multi_view, tensor_lists,
            saved_outputs, tensor_only, saved_constants, elementwise, node_outputs,
            half_native, half_rounds_numbers, complex_ok, not_differentiable,
        )
        if name is not None:
            opdef.name = name
        public = make_public(opdef)
        if declares_methods:
            tensor_method(name=opdef.name, method=method, inplace=inplace, aliases=aliases)(public)
        return public

    return declare


class OpFunction:
    """Marker type for the public callables ``op`` returns (they are plain functions)."""

    op: OpDef
    derivative: Callable[[str], Callable[[Callable[..., Any]], Callable[..., Any]]]

    if TYPE_CHECKING:
        # For type checkers: ``torch.exp(x)`` calls one (the forward's signature takes arrays,
        # so the public function's parameters are not typed from it).
        def __call__(self, *args: Any, **kwargs: Any) -> Any: ...


def make_public(opdef: OpDef, method: bool = False) -> Any:
    """The public function for an op (see :func:`~._dispatch.make_public_function`), or with
    ``method=True`` its Tensor method (the same, but errors count positions after ``self``)."""
    public = make_public_function(opdef, method)
    public.__name__ = opdef.name
    public.__qualname__ = opdef.name
    public.__doc__ = opdef.forward.__doc__
    public.__wrapped__ = opdef.forward  # type: ignore[attr-defined]
    public.__signature__ = opdef.signature  # type: ignore[attr-defined]
    public.op = opdef  # type: ignore[attr-defined]
    public.derivative = opdef.derivative  # type: ignore[attr-defined]
    opdef.publics[method] = public
    return public


def allow_complex(*publics: Any) -> None:
    """Put the ops of ``publics`` (public functions of ops declared elsewhere) on the allowlist
    of complex autograd, as ``@op(..., complex_ok=True)`` does: only for ops whose derivatives
    are already PyTorch's for complex values (linear in the gradient with real coefficients:
    views, reshapes, copies, sums), each tested against PyTorch."""
    for public in publics:
        public.op.complex_ok = True


def refuses_complex(kernel: str | None = None, message: str | None = None, *,
                    error: type[Exception] = NotImplementedError,
                    operands: int = 1) -> Callable[[Any], Any]:
    """Decorate an op's forward (below ``@op``) whose PyTorch CPU kernel has no complex
    version: a complex value among its first ``operands`` arguments (arrays or numbers, as
    promoted) raises PyTorch's error before anything is computed, instead of NumPy computing
    something PyTorch refuses: ``error`` (NotImplementedError unless PyTorch raises another)
    with ``message``, or ``"<kernel>" not implemented for 'ComplexFloat'``."""

    def decorate(forward: Any) -> Any:
        if operands == 1:  # (the common case, on hot paths: relu, gelu ...; self an array)
            @functools.wraps(forward)
            def run_one(self: Any, *args: Any) -> Any:
                if self.dtype.kind == "c":
                    if message is not None:
                        raise error(message)
                    raise no_kernel(kernel or forward.__name__, self.dtype)
                return forward(self, *args)

            return run_one

        @functools.wraps(forward)
        def run(*args: Any) -> Any:
            for value in args[:operands]:
                if type(value) is complex or getattr(value, "dtype", None) is not None and (
                    value.dtype.kind == "c"
                ):
                    if message is not None:
                        raise error(message)
                    dtype = value.dtype if type(value) is not complex else np.result_type(
                        *[a for a in args[:operands] if a is not None])
                    raise no_kernel(kernel or forward.__name__, dtype)
            return forward(*args)

        return run

    return decorate


def zero_derivative(ops: Any, grad: Any) -> Any:
    """A derivative that is zero everywhere (PyTorch's ``zeros_like(grad)``: no graph behind
    it): register it with ``op.derivative("self")(zero_derivative)``."""
    return ops.zeros_like(grad)


def recorded_as(public: Any, node_name: str) -> Any:
    """The op of ``public`` (its forward, derivatives and saving) recorded as ``node_name``.

    PyTorch gives some in-place overloads a node of their own, computed as the out-of-place
    op's (``t_`` records ``TBackward1`` where ``t`` records ``TBackward0``). Call it once the
    op's derivatives are registered: they are shared as they are then.
    """
    source: OpDef = public.op
    opdef = copy.copy(source)
    opdef.node_name = node_name
    opdef.derivatives = list(source.derivatives)
    # The copy's own tables: make_public records the renamed function in ``publics``, which
    # the source's JVP rules and ``__torch_function__`` read as the source's public function.
    opdef.publics = {}
    opdef.saved_constants = dict(source.saved_constants)
    opdef._plans = {}
    opdef.recorders = {}
    opdef.node_cls = make_node_class(node_name, opdef, source.multi_output_node)
    renamed = make_public(opdef)
    renamed.__name__ = renamed.__qualname__ = f"{source.name}_as_{node_name}"
    return renamed


def as_method(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` to attach as a Tensor method: an op's public function becomes its method form
    (``x.atan2(1.5)`` names argument position 1, as PyTorch's method does); another function
    is attached as a copy of itself with a code object of its own, by which
    :func:`argument_position` tells a method call from a function call (no wrapper: the call
    costs what the function's does)."""
    opdef = getattr(fn, "op", None)
    if isinstance(opdef, OpDef) and getattr(fn, "derivative", None) is not None:
        return make_public(opdef, method=True)
    if type(fn) is not types.FunctionType:
        return fn
    code = fn.__code__.replace()  # (equal to the function's, but another object)
    method = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__,
                                fn.__closure__)
    method.__kwdefaults__ = fn.__kwdefaults__
    method.__dict__.update(fn.__dict__)
    for attribute in ("__qualname__", "__doc__", "__module__", "__annotations__"):
        setattr(method, attribute, getattr(fn, attribute))
    _CALLED_AS[id(fn.__code__)] = False
    _CALLED_AS[id(code)] = True
    _CODES.extend((fn.__code__, code))  # (alive while their ids are keys)
    return method


# The code objects of the functions attached as Tensor methods (by id): True for the method's
# copy, False for the function itself.
_CALLED_AS: dict[int, bool] = {}
_CODES: list[types.CodeType] = []


def argument_position(position: int) -> int:
    """``position`` (an argument's, counted from 1 in the function form, ``self`` the first),
    as PyTorch's argument errors number it: one less when the innermost public function
    running was called as a Tensor method (``x.scatter_add(0, i, 1.0)``: ``src`` is argument
    3, ``torch.scatter_add(x, 0, i, 1.0)``: 4). Call it while raising, inside that function."""
    frame = sys._getframe(1)
    while frame is not None:
        called_as_method = _CALLED_AS.get(id(frame.f_code))
        if called_as_method is not None:
            return position - 1 if called_as_method else position
        frame = frame.f_back
    return position


# ----------------------------------------------------------------------------------------------
# Declaring Tensor methods: where a function is defined, whether it is ``Tensor.<name>`` and
# whether ``Tensor.<name>_`` writes it in place. ops/__init__.py attaches what was declared.

#: What ``Tensor.<name>_`` writes into ``self``: a callable's ``result(self, *args, **kwargs)``,
#: or ``"method"``: ``Tensor.<name>``'s (an op's method form, whose argument errors count
#: positions after ``self``, as ``addmm_``'s do).
InPlaceSource = Callable[..., Any] | Literal["method"]

_METHODS: dict[str, Callable[..., Any]] = {}
_IN_PLACE: dict[str, InPlaceSource] = {}

_F = TypeVar("_F", bound=Callable[..., Any])


def declare_methods(name: str, *, method: Callable[..., Any] | None = None,
                    inplace: InPlaceSource | None = None) -> None:
    """Declare ``Tensor.<name>`` (``method``: attached as :func:`as_method` makes it) and/or
    ``Tensor.<name>_`` (``inplace``: what it computes and writes into ``self``, see
    :data:`InPlaceSource`). A name declared twice is an error.

    The form for what no decorator reaches: an in-place op built after its function (the
    comparisons' ``gt_``, which record a node of their own) or in another module (the shifts'
    ``bitwise_left_shift_``, beside the in-place checks it runs). Prefer :func:`tensor_method`
    or ``@op(..., method=True, inplace=True)`` on the function itself.
    """
    if method is not None:
        _declare(_METHODS, name, method, f"Tensor.{name}")
    if inplace is not None:
        _declare(_IN_PLACE, name, inplace, f"Tensor.{name}_")


def _declare(table: dict[str, Any], name: str, value: Any, label: str) -> None:
    if name in table:
        raise ValueError(f"{label} is declared twice")
    table[name] = value


@overload
def tensor_method(fn: _F, /) -> _F: ...


@overload
def tensor_method(
    *, name: str | None = None, method: bool | Callable[..., Any] = True,
    inplace: bool | InPlaceSource = False, aliases: Sequence[str] = (),
) -> Callable[[_F], _F]: ...


def tensor_method(
    fn: Callable[..., Any] | None = None, /, *, name: str | None = None,
    method: bool | Callable[..., Any] = True, inplace: bool | InPlaceSource = False,
    aliases: Sequence[str] = (),
) -> Any:
    """Declare that a public function is a Tensor method; returns the function unchanged::

        @tensor_method(inplace=True, aliases=("subtract",))
        def sub(input, other, *, alpha=1): ...

    makes ``Tensor.sub`` and ``Tensor.subtract`` (``x.sub(y)`` is ``sub(x, y)``), and
    ``Tensor.sub_`` and ``Tensor.subtract_``, which write ``sub(x, y)`` into ``x``.

    ``name``: the Tensor attribute (default: the function's ``__name__``). ``method``: True for
    the function itself, a callable when the method is another function (``where``'s takes
    ``self`` as ``input``), False for no method. ``inplace``: True for an in-place method that
    writes the function's result into ``self``, a callable when PyTorch's in-place form is
    another op (recorded as a node of its own: ``polygamma_`` is ``PolygammaBackward1``), or
    ``"method"`` (see :data:`InPlaceSource`). ``aliases``: other names with the same
    declaration (``subtract`` for ``sub``, ``greater`` for ``gt``). Bare ``@tensor_method`` is
    ``@tensor_method()``: a method, no in-place form.
    """

    def declare(function: _F) -> _F:
        # True: the function itself; False: none.
        the_method = (function if method else None) if isinstance(method, bool) else method
        the_inplace = (function if inplace else None) if isinstance(inplace, bool) else inplace
        for each in (name or function.__name__, *aliases):
            declare_methods(each, method=the_method, inplace=the_inplace)
        return function

    return declare if fn is None else declare(fn)


def declared_methods() -> tuple[dict[str, Callable[..., Any]], dict[str, InPlaceSource]]:
    """What the ops modules declared: ``Tensor.<name>`` -> the function, and ``<name>`` of
    ``Tensor.<name>_`` -> what it writes into ``self``, in declaration order (copies)."""
    for name, source in _IN_PLACE.items():
        if name + "_" in _METHODS:
            raise ValueError(f"Tensor.{name}_ is declared both as a method and in place of "
                             f"Tensor.{name}")
        if isinstance(source, str) and name not in _METHODS:
            raise ValueError(f"Tensor.{name}_ is declared in place of the method, but "
                             f"Tensor.{name} is not declared")
    return dict(_METHODS), dict(_IN_PLACE)

