"""A session's compiled run plans: what ``Session.run`` does for one (fetches, feed keys) pair,
worked out once, as TensorFlow 1's ``make_callable`` and its cached executors do.

The first run of a pair goes the long way (the fetches resolved, the feeds checked, the IR
runner's plan); after it succeeds, :func:`build_plan` makes a :class:`RunPlan` and later runs
of the same pair skip all of that:

* ``constant``: every fetch depends on constants only (no placeholder, variable, assignment,
  impure op or control dependency upstream, nothing fed): folded once, as TensorFlow's grappler
  folds constant subgraphs; a run returns the folded values (an array fetch gets a fresh copy,
  a 0-d one its NumPy scalar, as TensorFlow returns them);
* ``generated``: function applications only, from fed values and folded constants: one
  generated NumPy function (``ir.numpy_codegen``) of the fed arrays, converted once each;
* ``runner``: anything else (variables, assignments, control dependencies): the IR runner with
  the resolved targets and feeds, so the state a run reads and writes is the session's.

A plan is keyed by the fetch and feed-key objects it was made for (the key holds them) and
remembers the graph's size and last operation: an operation added to (or rolled back from)
the graph drops every plan. A run whose generated code raises, or whose fed value is not
plain (a tensor, a shape that does not fit), takes the long way again, which raises
TensorFlow's errors; a failed run makes no plan, so a mistake raises at every run.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

try:  # (NumPy's floating-point error state, set as np.errstate sets it, without its cost)
    from numpy._core.umath import _extobj_contextvar, _make_extobj
except ImportError:  # pragma: no cover - another NumPy: np.errstate itself
    _extobj_contextvar = _make_extobj = None

from .. import ir
from ..ir.numpy_codegen import NumpyFunction, emitted_as, numpy_function
from .framework import Graph, Operation, Tensor

__all__ = ["Leaf", "RunPlan", "build_plan", "plan_key", "rebuild", "to_result"]

#: The node kinds the ``generated`` plan runs (the rest go to the runner).
_GENERATED_KINDS = frozenset({"call", "constant", "placeholder"})


def to_result(array: np.ndarray | None) -> Any:
    """A fetched array as ``Session.run`` returns it: a 0-d one as its NumPy scalar, others as
    an array of their own, an operation's None as None."""
    if array is None:
        return None
    return array[()] if array.ndim == 0 else np.array(array)


def plan_key(fetches: Any, feed_dict: Any) -> Any:
    """The cache key of a run: the fetch (or a flat list, tuple or dict of them) and the feed
    keys, themselves (tensors, operations and variables hash by identity, names by value); None
    for a run that is not cached (nested fetches, a fetch of another kind). A lone tensor
    without feeds is its own key."""
    if isinstance(fetches, list | tuple):
        if not all(_is_leaf(f) for f in fetches):
            return None
        fetch_key: Any = (type(fetches), *fetches)
    elif isinstance(fetches, dict):
        if not all(_is_leaf(f) for f in fetches.values()):
            return None
        fetch_key = (dict, *fetches, *fetches.values())
    elif _is_leaf(fetches):
        fetch_key = fetches
    else:
        return None
    if not feed_dict:
        return fetch_key
    if not all(_is_leaf(k) for k in feed_dict):
        return None
    return (fetch_key, *feed_dict)


def _is_leaf(fetch: Any) -> bool:
    """Whether ``fetch`` is a graph element a plan may be keyed by."""
    return isinstance(fetch, Tensor | Operation | str) or hasattr(fetch, "_graph_element")


class RunPlan:
    """What a run of one (fetches, feed keys) pair does (``Session.run`` follows it)."""

    __slots__ = (
        "kind",
        "size",
        "last",
        "structure",
        "results",
        "targets",
        "fed",
        "function",
        "constants",
        "quiet",
        "scalar",
    )

    def __init__(self, kind: str, nodes: list[ir.Node], structure: Any) -> None:
        self.kind = kind
        self.size = len(nodes)  # the graph's node count it was made for, and its last node
        self.last = nodes[-1] if nodes else None
        self.structure = structure  # how to shape the results (see rebuild)
        self.results: list[Any] = []  # constant: the values to return
        self.targets: list[Any] = []  # runner: the IR values and nodes to compute
        # per feed, in feed_dict order: (IR value, NumPy dtype, static shape or None, whether
        # that shape is fully known)
        self.fed: list[tuple[ir.Value, np.dtype, tuple | None, bool]] = []
        self.function: NumpyFunction | None = None  # generated: the plan as a NumPy function
        self.constants: list[np.ndarray] = []  # generated: the folded arrays it also reads
        self.quiet = False  # generated: its code is NumPy operators only (errstate suffices)
        self.scalar = False  # constant: one fetch, a NumPy scalar (returned as it is)

    def feeds(self, feed_dict: Any) -> list[np.ndarray] | None:
        """The fed values as arrays of the placeholders' dtypes, or None when one needs the
        long way's checks (a tensor, a shape that does not fit, a value NumPy refuses)."""
        arrays = []
        for (_, dtype, shape, exact), value in zip(self.fed, feed_dict.values(), strict=True):
            if isinstance(value, Tensor):
                return None
            try:
                array = np.array(value, dtype=dtype)
            except Exception:  # noqa: BLE001 - the long way raises what TensorFlow raises
                return None
            if exact:
                if array.shape != shape:
                    return None
            elif shape is not None and not _fits(array.shape, shape):
                return None
            arrays.append(array)
        return arrays

    def compute(self, feed_dict: Any) -> list[Any] | None:
        """The fetched values of a ``generated`` plan, or None when the run needs the long
        way (a feed to check, generated code that raised)."""
        arrays = self.feeds(feed_dict) if self.fed else []
        if arrays is None:
            return None
        fn = self.function.fn  # type: ignore[union-attr]
        try:
            if self.quiet and _extobj_contextvar is not None:
                token = _ignore_float_errors()
                try:
                    out = fn(*arrays, *self.constants)
                finally:
                    _extobj_contextvar.reset(token)
            elif self.quiet:
                with np.errstate(all="ignore"):
                    out = fn(*arrays, *self.constants)
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    out = fn(*arrays, *self.constants)
        except Exception:  # noqa: BLE001 - the long way raises TensorFlow's error
            return None
        return [to_result(a) for a in out]


#: (the error state in force, the same with every floating-point error ignored)
_IGNORING: tuple[Any, Any] = (None, None)


def _ignore_float_errors() -> Any:
    """Enter ``np.errstate(all="ignore")`` (what it sets, made once per error state in force:
    the rest of it, ``np.setbufsize``'s size and ``np.seterrcall``'s function, kept); returns
    the token that restores the state."""
    global _IGNORING
    current = _extobj_contextvar.get()  # type: ignore[union-attr]
    if _IGNORING[0] is not current:
        _IGNORING = (current, _make_extobj(all="ignore"))  # type: ignore[misc]
    return _extobj_contextvar.set(_IGNORING[1])  # type: ignore[union-attr]


def _fits(actual: tuple, static: tuple) -> bool:
    if len(actual) != len(static):
        return False
    for a, s in zip(actual, static, strict=True):
        if s is not None and a != s:
            return False
    return True


def build_plan(
    graph: Graph,
    structure: Any,
    leaves: Sequence[Any],
    feeds: dict[ir.Value, np.ndarray],
    values: list[Any],
) -> RunPlan | None:
    """The plan of a run that just succeeded: its fetched ``leaves`` (tensors and operations),
    its ``feeds`` (IR value -> array, in feed_dict order) and the ``values`` it returned."""
    all_nodes = graph.ir.nodes
    targets = [leaf._node if isinstance(leaf, Operation) else leaf._value for leaf in leaves]
    fed_values = list(feeds)
    nodes = ir.needed_nodes(graph.ir, targets, fed_values)
    foldable = _foldable(nodes, fed_values)
    values_only = all(isinstance(t, ir.Value) for t in targets)
    if values_only and not feeds and all(id(n) in foldable for n in nodes):
        plan = RunPlan("constant", all_nodes, structure)
        plan.results = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
        plan.scalar = isinstance(structure, Leaf) and isinstance(values[0], np.generic)
        return plan
    plan = RunPlan("runner", all_nodes, structure)
    plan.targets = targets
    plan.fed = [
        (v, np.dtype(feeds[v].dtype), v.shape, v.shape is not None and None not in v.shape)
        for v in fed_values
    ]
    if values_only and _generate(graph, plan, nodes, foldable, targets, fed_values):
        plan.kind = "generated"
    return plan


def _foldable(nodes: Sequence[ir.Node], fed: Sequence[ir.Value]) -> set[int]:
    """Ids of the nodes among ``nodes`` (in graph order) whose values depend on constants
    only: constants, and pure single-output calls without control inputs of such nodes."""
    fed_ids = {id(v) for v in fed}
    foldable: set[int] = set()
    for node in nodes:
        if node.kind == "constant":
            foldable.add(id(node))
        elif (
            node.kind == "call"
            and len(node.outputs) == 1
            and node.target not in ir.IMPURE
            and not node.control
            and all(id(v.node) in foldable and id(v) not in fed_ids for v in node.inputs)
        ):
            foldable.add(id(node))
    return foldable


def _generate(
    graph: Graph,
    plan: RunPlan,
    nodes: Sequence[ir.Node],
    foldable: set[int],
    targets: list[Any],
    fed: list[ir.Value],
) -> bool:
    """Fill in ``plan``'s generated function (the needed nodes that are not folded, as NumPy
    code of the fed values and the folded values they read); False when it cannot be."""
    rest = [n for n in nodes if id(n) not in foldable]
    if any(n.kind not in _GENERATED_KINDS or n.control for n in rest):
        return False
    if any(v.shape is None for n in rest for v in n.outputs):
        return False  # (unknown rank: a 0-d result would stay a NumPy scalar)
    folded: list[ir.Value] = []
    for value in [*(v for n in rest for v in n.inputs), *targets]:
        node = value.node
        if id(node) in foldable and node.kind == "call" and not any(value is f for f in folded):
            folded.append(value)
    names = {v: f"in{i}" for i, v in enumerate(fed + folded)}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            constants = ir.run(graph.ir, folded) if folded else []
        function = numpy_function(graph.ir, fed + folded, targets, "run", names)
    except Exception:  # noqa: BLE001 - then the runner runs it, as the first run did
        return False
    plan.function = function
    plan.constants = [np.asarray(a) for a in constants]
    plan.quiet = all(emitted_as(n) == "operator" for n in rest if n.kind == "call")
    return True


class Leaf:
    """In a fetch structure, where the value of fetch number ``index`` goes."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def rebuild(structure: Any, values: list[Any]) -> Any:
    """``structure`` (nested lists, tuples and dicts of :class:`Leaf`) with the values."""
    if isinstance(structure, Leaf):
        return values[structure.index]
    if isinstance(structure, list | tuple):
        items = [rebuild(s, values) for s in structure]
        return type(structure)(items) if isinstance(structure, list) else tuple(items)
    return {k: rebuild(v, values) for k, v in structure.items()}
