"""The batched tensor of ``vmap``: a Tensor whose ops see one example, computing on all of them.

A :class:`BatchedTensor` holds ``value``, a tensor with the batch at dimension 0, and the
``level`` of the ``vmap`` call that made it; its *logical* shape (what the function sees:
``shape``, ``dim()``, ``size()``) is ``value.shape[1:]``. Nested ``vmap`` nests the wrappers:
the value of a level-2 tensor may be a level-1 batched tensor, whose own value holds both batch
dimensions. Every op on a batched tensor reaches :meth:`BatchedTensor.__torch_function__`
(chainrule's ``__torch_function__`` protocol: public functions, ``nn.functional`` and methods
hand the call over), which looks up the op's batching rule (``_batching_rules``): the rule
unwraps the tensors batched at the highest level among the arguments, applies the op to the
values with the batch dimension carried along (shifted dims, aligned ranks, a reshaped batch for
convolutions ...), and wraps the result. Ops on the values are ordinary ops: tensors batched at
a lower level dispatch again, plain tensors record autograd history as usual, so ``grad`` of a
``vmap`` and ``vmap`` of ``grad`` both work. An op without a rule runs once per example
(:func:`loop_fallback`), stacked.

Plain tensors pay nothing: nothing here runs unless a batched tensor is an argument.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._overrides import DisableTorchFunctionSubclass
from .._tensor import Tensor, wrap
from ..ops._dispatch import broadcast_error
from ..ops.creation import default_generator
from ..ops.shape import stack

__all__ = [
    "BatchedTensor",
    "FALLBACK_COUNTS",
    "RULES",
    "RULES_BY_FUNCTION",
    "active_levels",
    "batch_size",
    "ensure_batched",
    "loop_fallback",
    "max_level",
    "physical",
    "rebatch",
    "unwrap",
    "wrap_batched",
]

# Rules by the function's name (``sum`` is ``chainrule.sum`` and ``Tensor.sum``), and by the
# function object for operators whose functions have no telling name (``Tensor.__rpow__``).
# A rule is called as ``rule(func, args, kwargs, level)``.
Rule = Callable[[Callable[..., Any], tuple, dict, int], Any]
RULES: dict[str, Rule] = {}
RULES_BY_FUNCTION: dict[Any, Rule] = {}

# The vmap calls running, innermost last: (level, batch size, randomness).
_LEVELS: list[tuple[int, int, str]] = []


def active_levels() -> list[tuple[int, int, str]]:
    """The running vmap levels, outermost first: ``(level, batch size, randomness)``."""
    return _LEVELS


def batch_size(level: int) -> int:
    for lvl, size, _ in _LEVELS:
        if lvl == level:
            return size
    raise RuntimeError(f"vmap: level {level} is not running")


class BatchedTensor(Tensor):
    """A tensor batched by ``vmap`` at ``level``: ``value`` holds the batch at dimension 0.

    Its ``_data`` holds the logical shape and dtype only (``_LogicalArray``), so that attribute
    reads (``shape``, ``dtype``, ``ndim``) give the logical answers; values are only reached
    through ops, which dispatch to the batching rules."""

    __slots__ = ("_value", "_level")

    #: PyTorch's backward formulas see a batched tensor as "subclass-like" and take their
    #: composite paths (``ops._dispatch.functorch_wrapped``).
    _FUNCTORCH_WRAPPED = True

    @classmethod
    def __torch_function__(
        cls, func: Callable[..., Any], types: tuple, args: tuple = (), kwargs: Any = None
    ) -> Any:
        kwargs = kwargs or {}
        level = max_level(args, kwargs)
        if level < 0:  # (a batched tensor of a finished vmap, e.g. one that escaped)
            return NotImplemented
        if kwargs.get("out") is not None:
            name = getattr(func, "__name__", "op").lstrip("_")
            raise RuntimeError(
                f"Batching rule not implemented for aten::{name}.out; the fallback path doesn't "
                "work on out= or view ops."
            )
        rule = RULES_BY_FUNCTION.get(func)
        if rule is None:
            name = getattr(func, "__name__", "")
            rule = RULES.get(name)
            if rule is None:
                # (an op recorded under another node, ``recorded_as``: ``t_as_TBackward1``)
                rule = RULES.get(name.split("_as_")[0], loop_fallback)
        return rule(func, args, kwargs, level)

    @property
    def requires_grad(self) -> bool:  # type: ignore[override]
        """Whether the values require grad."""
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._value.requires_grad = value

    @property
    def grad_fn(self) -> Any:  # type: ignore[override]
        return self._value.grad_fn

    @property
    def is_leaf(self) -> bool:  # type: ignore[override]
        return self._value.is_leaf

    @property
    def grad(self) -> Any:  # type: ignore[override]
        return None

    @grad.setter
    def grad(self, value: Any) -> None:
        raise RuntimeError("vmap: setting .grad of a batched tensor is not supported")

    def __repr__(self, *args: Any, **kwargs: Any) -> str:
        inner = repr(self._value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n    {inner}\n)"


POISON_MESSAGE = (
    "vmap: an operation read the values of a batched tensor outside its batching rules (an "
    "in-place operation or assignment into a tensor that is not batched, with a batched "
    "value?); PyTorch refuses it too: use out-of-place operations on the batched tensors"
)


class _LogicalArray:
    """The ``_data`` of a batched tensor: the logical shape and dtype, and no values. Reading
    its values in any way (NumPy converting it, an array method) raises instead of silently
    giving zeros: an op that reaches ``_data`` without its batching rule (a write into a plain
    tensor from a batched one) fails loudly."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        """Contiguous strides of the logical shape (for code that picks a path by layout)."""
        strides = []
        step = self.itemsize
        for size in reversed(self.shape):
            strides.append(step)
            step *= max(size, 1)
        return tuple(reversed(strides))

    @property
    def flags(self) -> Any:
        """Contiguous and read-only (layout only; writing into it is refused)."""
        return _LOGICAL_FLAGS

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(POISON_MESSAGE)

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(POISON_MESSAGE)

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 0


class _LogicalFlags:
    __slots__ = ()
    c_contiguous = True
    contiguous = True
    writeable = False
    owndata = False

    @property
    def f_contiguous(self) -> bool:
        return False


_LOGICAL_FLAGS = _LogicalFlags()


def wrap_batched(value: Tensor, level: int) -> BatchedTensor:
    """``value`` (batch at dimension 0) as a tensor batched at ``level``."""
    t = object.__new__(BatchedTensor)
    data = value._data
    t._data = _LogicalArray(data.shape[1:], data.dtype)
    t._requires_grad = False
    t._grad_node = None
    t._output_nr = 0
    t._grad = None
    t._vc = [0]
    t._base = None
    t._acc = None
    t._hooks = None
    t._retains_grad = False
    t._value = value
    t._level = level
    return t


def unwrap(x: Any, level: int) -> tuple[Any, bool]:
    """``(value, True)`` for a tensor batched at ``level``, else ``(x, False)``."""
    if type(x) is BatchedTensor and x._level == level:
        return x._value, True
    return x, False


def max_level(args: tuple, kwargs: dict) -> int:
    """The highest level among the batched tensors of the arguments (also inside lists and
    tuples, one deep, and in index tuples); -1 when none is from a running vmap."""
    best = -1
    for arg in (*args, *kwargs.values()) if kwargs else args:
        cls = type(arg)
        if cls is BatchedTensor:
            level = arg._level
            if level > best and _running(level):
                best = level
        elif cls is list or cls is tuple:
            for item in arg:
                if type(item) is BatchedTensor:
                    level = item._level
                    if level > best and _running(level):
                        best = level
    return best


def _running(level: int) -> bool:
    """Whether the vmap of ``level`` is running (the innermost one, most of the time)."""
    if _LEVELS and _LEVELS[-1][0] == level:
        return True
    return any(lvl == level for lvl, _, _ in _LEVELS)


def call(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)``, handed to the batching rules first when an argument is batched
    (a rule calling a function that reads its arguments' arrays before dispatching, on values
    that may be batched at a lower level)."""
    if max_level(args, kwargs) >= 0:
        return BatchedTensor.__torch_function__(func, (), args, kwargs)
    return func(*args, **kwargs)


def plain_view(x: BatchedTensor) -> Tensor:
    """A plain tensor of ``x``'s logical shape and dtype, without values (metadata only)."""
    return wrap(x._data)


def logical_zeros(x: BatchedTensor) -> Tensor:
    """Zeros of ``x``'s logical shape and dtype (to let an op check shapes, PyTorch's errors)."""
    return wrap(np.zeros(x._data.shape, dtype=x._data.dtype))


# ----------------------------------------------------------------------------------------------
# Levels of a tensor, physical values, and adding batch dimensions (for grad inside vmap)


def levels_of(x: Any) -> list[int]:
    """The levels ``x`` is batched at, outermost wrapper (highest level) first."""
    found = []
    while type(x) is BatchedTensor:
        found.append(x._level)
        x = x._value
    return found


def physical(x: Any) -> Any:
    """The plain tensor under every wrapper of ``x`` (its batch dimensions first, lowest level
    first)."""
    while type(x) is BatchedTensor:
        x = x._value
    return x


def rebatch(plain: Tensor, levels: list[int]) -> Any:
    """``plain`` (batch dimensions first, lowest level first) wrapped at ``levels`` (highest
    first, as :func:`levels_of` lists them)."""
    out: Any = plain
    for level in reversed(levels):
        out = wrap_batched(out, level)
    return out


def ensure_batched(x: Any, levels: list[int] | None = None) -> Any:
    """``x`` batched at every running level (or at every level of ``levels``, running ones): the
    missing batch dimensions are added (expanded, no copy). A gradient taken inside ``vmap``
    differentiates with respect to this, so that the gradient of an unbatched input is per
    example, as ``torch.func`` gives it."""
    if not _LEVELS or not isinstance(x, Tensor):
        return x
    have = levels_of(x)
    wanted = sorted(lvl for lvl, _, _ in _LEVELS if levels is None or lvl in levels)
    if all(lvl in have for lvl in wanted):
        return x
    plain = physical(x)
    present = sorted(have)
    # Insert each missing level's dimension at its place among the batch dimensions.
    for lvl in wanted:
        if lvl in present:
            continue
        position = sum(1 for p in present if p < lvl)
        plain = plain.unsqueeze(position)
        sizes = list(plain.shape)
        sizes[position] = batch_size(lvl)
        plain = plain.expand(*sizes)
        present = sorted([*present, lvl])
    return rebatch(plain, sorted(present, reverse=True))


# ----------------------------------------------------------------------------------------------
# The fallback: one call per example


def _select(x: Any, level: int, index: int) -> Any:
    value, batched = unwrap(x, level)
    if batched:
        return value.select(0, index)
    if type(x) is list or type(x) is tuple:
        return type(x)(_select(item, level, index) for item in x)
    return x


#: How many times each op ran by :func:`loop_fallback` (the marker of an op without a batching
#: rule; the tests check that the common ops never land here).
FALLBACK_COUNTS: dict[str, int] = {}


#: How many transforms other than ``vmap`` (``grad``, ``vjp`` ...) that are running began
#: before the vmap ``level`` (installed by ``func._transforms``): PyTorch numbers its levels by
#: the depth of the transform stack, counting every transform.
TRANSFORMS_BEFORE: list[Callable[[int], int]] = [lambda level: 0]

_INPLACE_REFUSAL = (
    "vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` in "
    "extra_args that has more elements than `self`. This happened due to `other` being vmapped "
    "over but `self` not being vmapped over {where}. Please try to use out-of-place operators "
    "instead of {name}. If said operator is being called inside the PyTorch framework, please "
    "file a bug report instead."
)
#: In-place ops whose batching rule PyTorch writes as "inplace arithmetic" (the binary
#: point-wise rules, copy_, masked_fill_ with a batched mask, index_put_ of ``a[i] = b``).
_ARITHMETIC_IN_PLACE = frozenset({
    "sub_", "subtract_", "mul_", "multiply_", "div_", "divide_", "true_divide_", "copy_",
    "masked_fill_", "setitem", "__setitem__", "index_put_", "logical_and_", "logical_or_",
    "logical_xor_",
})
#: In-place ops with rules of their own that name themselves.
_NAMED_IN_PLACE = frozenset({"index_add_", "fill_", "index_fill_"})
#: In-place ops that PyTorch runs on the batched values directly: its broadcast error for
#: ``self`` (the batch size leading the other operand's shape).
_BROADCAST_IN_PLACE = frozenset({"add_", "atan2_", "copysign_"})


def pytorch_level(level: int) -> int:
    """The number PyTorch gives the vmap ``level``: its depth among the running transforms."""
    depth = sum(1 for lvl, _, _ in _LEVELS if lvl <= level)
    return depth + TRANSFORMS_BEFORE[0](level)


#: In-place ops whose batching rule PyTorch writes directly on the batched values: a broadcast
#: error for ``self`` names the physical shapes (the batch size first, size-1 dimensions added
#: to align the logical ranks), where the ops it batches by its fallback name logical shapes.
PHYSICAL_IN_PLACE = _ARITHMETIC_IN_PLACE | _BROADCAST_IN_PLACE


def in_place_broadcast_error(args: tuple, kwargs: dict, level: int) -> RuntimeError | None:
    """PyTorch's error when the operands of the in-place op on ``args[0]`` broadcast, as
    physical tensors, to another shape than ``self``'s (None if they do not)."""
    operands = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
    rank = max(len(a._data.shape) for a in operands)
    shapes = []
    for operand in operands:
        value, batched = unwrap(operand, level)
        shape = tuple(operand._data.shape)
        if batched:
            shape = (value.shape[0],) + (1,) * (rank - len(shape)) + shape
        shapes.append(shape)
    error = broadcast_error(*(np.broadcast_to(np.empty((), bool), s) for s in shapes))
    if error is not None:
        return error
    target = np.broadcast_shapes(*shapes)
    if target == shapes[0]:
        return None
    return RuntimeError(
        f"output with shape {list(shapes[0])} doesn't match the broadcast shape {list(target)}"
    )


def refuse_unbatched_self(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> None:
    """PyTorch's error for the in-place op ``func`` writing into a ``self`` not batched at
    ``level`` when another argument is (each example would write over the others)."""
    name = getattr(func, "__name__", "inplace arithmetic")
    if name in _BROADCAST_IN_PLACE:
        error = in_place_broadcast_error(args, kwargs, level)
        if error is not None:
            raise error
    mask_batched = name == "masked_fill_" and len(args) > 1 and unwrap(args[1], level)[1]
    if name in _ARITHMETIC_IN_PLACE and (name != "masked_fill_" or mask_batched):
        message = _INPLACE_REFUSAL.format(name="inplace arithmetic", where="in a vmap")
    elif name in _NAMED_IN_PLACE:
        message = _INPLACE_REFUSAL.format(name=name, where="in a vmap")
    else:  # (the ops PyTorch batches by its boxed fallback)
        where = f"at level {pytorch_level(level)}"
        message = _INPLACE_REFUSAL.format(name=f"aten::{name}", where=where)
    raise RuntimeError(message)


def loop_fallback(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """An op without a batching rule: run it once per example and stack the results (slow,
    but right). In-place ops write each example's slice of the batched ``self``."""
    name = getattr(func, "__name__", repr(func))
    in_place = bool(args) and name.endswith("_") and not name.endswith("__")
    if in_place and not unwrap(args[0], level)[1]:
        refuse_unbatched_self(func, args, kwargs, level)
    FALLBACK_COUNTS[name] = FALLBACK_COUNTS.get(name, 0) + 1
    size = batch_size(level)
    randomness = next(r for lvl, _, r in _LEVELS if lvl == level)
    state = None
    if randomness == "same":
        state = default_generator._rng.bit_generator.state
    results = []
    for b in range(size):
        if state is not None:
            default_generator._rng.bit_generator.state = state
        b_args = tuple(_select(a, level, b) for a in args)
        b_kwargs = {k: _select(v, level, b) for k, v in kwargs.items()}
        results.append(call(func, *b_args, **b_kwargs))
    if in_place:
        return args[0]
    return _stack_results(results, level, name)


def _stack_results(results: list[Any], level: int, name: str) -> Any:
    first = results[0] if results else None
    if isinstance(first, Tensor):
        return wrap_batched(stack(results, 0), level)
    if isinstance(first, tuple | list):
        columns = [_stack_results([r[k] for r in results], level, name) for k in range(len(first))]
        if hasattr(type(first), "_make"):
            return type(first)._make(columns)  # type: ignore[attr-defined]
        return type(first)(columns)
    if all(r == first for r in results):
        return first
    raise RuntimeError(
        f"vmap: {name} returned values that differ between the examples of the batch and are "
        "not tensors; chainrule cannot batch it"
    )


def metadata(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """Ops reading only the logical shape and dtype (``size``, ``dim``, ``numel``,
    ``is_floating_point`` ...): run on a plain tensor of the logical shape."""
    plain = tuple(plain_view(a) if type(a) is BatchedTensor else a for a in args)
    with DisableTorchFunctionSubclass():
        return func(*plain, **kwargs)
