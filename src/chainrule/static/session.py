"""``tf.Session``: runs the graph's IR with the interpreter, keeps the variables' arrays.

``run`` takes a fetch, or a list, tuple or dict of them (nested), as a tensor, an operation, a
variable or a name; it computes only what the fetches need, with ``feed_dict`` giving values to
placeholders (or any tensor), and returns NumPy values in the same structure (a 0-d result is a
NumPy scalar, an operation gives None). TensorFlow's errors for the common mistakes: a feed of
the wrong shape, an unfed placeholder, an uninitialized variable, a fetch from another graph,
a closed session.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import ir
from . import errors
from .framework import Graph, Operation, Tensor, TensorShape, get_default_graph
from .run_plan import Leaf, RunPlan, build_plan, plan_key, rebuild, to_result

__all__ = ["Session", "InteractiveSession", "default_session", "get_default_session"]

_SESSION_STACK: list[Session] = []
#: A session keeps at most this many run plans (then starts again: a program that makes new
#: fetch objects at each run must not grow the cache).
_MAX_PLANS = 256


def get_default_session() -> Session | None:
    """The innermost session entered with ``with`` (or an InteractiveSession), or None."""
    return _SESSION_STACK[-1] if _SESSION_STACK else None


def default_session() -> Session:
    """The default session; TensorFlow's error when there is none."""
    session = get_default_session()
    if session is None:
        raise ValueError(
            "Cannot evaluate tensor using `eval()`: No default session is "
            "registered. Use `with sess.as_default()` or pass an explicit "
            "session to `eval(session=sess)`"
        )
    return session


def _shape_list(shape: TensorShape) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


class Session:
    """A session over one graph (the default graph when it is made)."""

    def __init__(self, target: str = "", graph: Graph | None = None, config: Any = None) -> None:
        self._graph = graph if graph is not None else get_default_graph()
        self._closed = False
        self._state: dict[ir.Node, np.ndarray] = {}
        self._runner = ir.GeneratedRunner(self._graph.ir)
        self._contexts: list[Any] = []
        self._plans: dict[tuple, RunPlan] = {}

    @property
    def graph(self) -> Graph:
        """The graph it runs."""
        return self._graph

    # -- fetches and feeds --------------------------------------------------------------------

    def _element(self, fetch: Any) -> Any:
        """A fetch as a tensor or operation of this graph, with TensorFlow's errors."""
        if fetch is None:
            raise TypeError(
                f"Argument `fetch` = {fetch} has invalid type "
                f'"{type(fetch).__name__}". Cannot be None'
            )
        try:
            return self._graph.as_graph_element(fetch)
        except KeyError as error:
            raise ValueError(
                f"Argument `fetch` = {fetch} cannot be interpreted as a Tensor. ({error})"
            ) from None
        except ValueError as error:
            raise ValueError(
                f"Argument `fetch` = {fetch} cannot be interpreted as a Tensor. ({error})"
            ) from None
        except TypeError as error:
            raise TypeError(
                f"Argument `fetch` = {fetch} has invalid type "
                f'"{type(fetch).__name__}" must be a string or Tensor. '
                f"({error})"
            ) from None

    def _flatten(self, fetches: Any, leaves: list[Any]) -> Any:
        """The fetch structure with each leaf replaced by its index in ``leaves`` (nested
        lists, tuples and dicts: a walk over the user's structure, not over the graph)."""
        if isinstance(fetches, list | tuple):
            items = [self._flatten(f, leaves) for f in fetches]
            return type(fetches)(items) if isinstance(fetches, list) else tuple(items)
        if isinstance(fetches, dict):
            return {k: self._flatten(v, leaves) for k, v in fetches.items()}
        leaves.append(self._element(fetches))
        return Leaf(len(leaves) - 1)

    def _feeds(self, feed_dict: Any) -> dict[ir.Value, np.ndarray]:
        feeds: dict[ir.Value, np.ndarray] = {}
        for key, value in (feed_dict or {}).items():
            try:
                tensor = self._graph.as_graph_element(key, allow_operation=False)
            except (KeyError, ValueError, TypeError) as error:
                raise TypeError(f"Cannot interpret feed_dict key as Tensor: {error}") from None
            if isinstance(tensor, Operation):
                raise TypeError(
                    "Cannot interpret feed_dict key as Tensor: Can not convert a "
                    "Operation into a Tensor."
                )
            if isinstance(value, Tensor):
                raise TypeError(
                    "The value of a feed cannot be a tf.Tensor object. Acceptable feed values "
                    "include Python scalars, strings, lists, numpy ndarrays, or TensorHandles. "
                    "For reference, the tensor object was "
                    f"{value} which was passed to the argument `feed_dict` with key {key}."
                )
            array = np.array(value, dtype=tensor.dtype.base_dtype.base.np)
            if not tensor.shape.is_compatible_with(array.shape):
                raise ValueError(
                    f"Cannot feed value of shape {array.shape} for Tensor "
                    f"{tensor.name}, which has shape {tensor.shape}"
                )
            feeds[tensor._value] = array
        return feeds

    # -- running ------------------------------------------------------------------------------

    def run(
        self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
    ) -> Any:
        """The values of ``fetches`` (same structure), computing what they need.

        The first run of a (fetches, feed keys) pair resolves and checks everything, then keeps
        a compiled plan of it (``run_plan``): later runs of the pair convert the fed values and
        run the plan, with folded constants, without walking the graph."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if type(fetches) is Tensor:
            key = (fetches, *feed_dict) if feed_dict else fetches
        else:
            key = plan_key(fetches, feed_dict)
        plan = self._plans.get(key) if key is not None else None
        if plan is not None:
            nodes = self._graph._ir.nodes
            if plan.size == len(nodes) and plan.last is nodes[-1]:
                kind = plan.kind
                if plan.scalar:
                    return plan.results[0]
                if kind == "constant":
                    values = [v.copy() if isinstance(v, np.ndarray) else v for v in plan.results]
                elif kind == "generated":
                    values = plan.compute(feed_dict)
                else:
                    arrays = plan.feeds(feed_dict) if plan.fed else []
                    if arrays is not None:
                        feeds = {fed[0]: a for fed, a in zip(plan.fed, arrays, strict=True)}
                        values = [to_result(a) for a in self._compute(plan.targets, feeds)]
                    else:
                        values = None
                if values is not None:
                    structure = plan.structure
                    return values[0] if type(structure) is Leaf else rebuild(structure, values)
            else:  # (the graph changed: every plan is remade)
                self._plans.clear()
        return self._run_long(fetches, feed_dict, key)

    def _run_long(self, fetches: Any, feed_dict: Any, key: tuple | None) -> Any:
        """A run with every fetch resolved and every feed checked; keeps its plan."""
        leaves: list[Any] = []
        if isinstance(fetches, Tensor) and fetches.graph is self._graph:
            structure: Any = Leaf(0)  # (the common case, without the walk)
            leaves.append(fetches)
        else:
            structure = self._flatten(fetches, leaves)
        feeds = self._feeds(feed_dict) if feed_dict else {}
        targets = [leaf._node if isinstance(leaf, Operation) else leaf._value for leaf in leaves]
        values = [to_result(a) for a in self._compute(targets, feeds)]
        if key is not None and len(feeds) == len(feed_dict or ()):
            if len(self._plans) >= _MAX_PLANS:
                self._plans.clear()
            plan = build_plan(self._graph, structure, leaves, feeds, values)
            if plan is not None:
                self._plans[key] = plan
        return rebuild(structure, values)

    def _compute(
        self, targets: list[Any], feeds: dict[ir.Value, np.ndarray]
    ) -> list[np.ndarray | None]:
        """The arrays of ``targets`` from the IR runner, its errors as TensorFlow's (and NumPy's
        floating-point errors ignored, whatever ``np.seterr`` says: TensorFlow gives inf/nan)."""
        try:
            with np.errstate(all="ignore"):
                return self._runner.run(targets, feeds, self._state)
        except ir.MissingFeed as missing:
            raise self._unfed(missing.node) from None
        except ir.UninitializedVariable as uninitialized:
            name = uninitialized.node.name
            raise errors.FailedPreconditionError(
                None,
                self._graph._operation(uninitialized.node),
                f"Attempting to use uninitialized value {name}\n\t [[{{{{node {name}/read}}}}]]",
            ) from None
        except (RuntimeError, ValueError, IndexError) as error:
            raise errors.InvalidArgumentError(None, None, str(error)) from None

    def _unfed(self, node: ir.Node) -> errors.InvalidArgumentError:
        tensor = self._graph._tensor(node.outputs[0])
        message = (
            f"You must feed a value for placeholder tensor '{node.name}' with dtype "
            f"{tensor.dtype.base_dtype._proto_name}"
        )
        if tensor.shape.ndims is not None:
            message += f" and shape {_shape_list(tensor.shape)}"
        message += f"\n\t [[{{{{node {node.name}}}}}]]"
        return errors.InvalidArgumentError(None, self._graph._operation(node), message)

    def close(self) -> None:
        """Free the session's state; running it afterwards is an error."""
        self._closed = True
        self._state.clear()
        self._plans.clear()

    @contextlib.contextmanager
    def as_default(self) -> Iterator[Session]:
        """Make this the default session (and its graph the default graph)."""
        _SESSION_STACK.append(self)
        try:
            with self._graph.as_default():
                yield self
        finally:
            _SESSION_STACK.remove(self)

    def __enter__(self) -> Session:
        context = self.as_default()
        context.__enter__()
        self._contexts.append(context)
        return self

    def __exit__(self, *exc: Any) -> None:
        context = self._contexts.pop()
        context.__exit__(*exc)
        self.close()

    def __repr__(self) -> str:
        return f"<tensorflow.python.client.session.Session object at {id(self):#x}>"


class InteractiveSession(Session):
    """A session that makes itself the default session when it is made (for notebooks)."""

    def __init__(self, target: str = "", graph: Graph | None = None, config: Any = None) -> None:
        super().__init__(target, graph, config)
        _SESSION_STACK.append(self)

    def close(self) -> None:
        """Close it and stop being the default session."""
        super().close()
        if self in _SESSION_STACK:
            _SESSION_STACK.remove(self)
