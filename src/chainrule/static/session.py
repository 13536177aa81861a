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

__all__ = ["Session", "InteractiveSession", "default_session", "get_default_session"]

_SESSION_STACK: list[Session] = []


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
        return _Leaf(len(leaves) - 1)

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
        """The values of ``fetches`` (same structure), computing what they need."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        leaves: list[Any] = []
        if isinstance(fetches, Tensor) and fetches.graph is self._graph:
            structure: Any = _Leaf(0)  # (the common case, without the walk)
            leaves.append(fetches)
        else:
            structure = self._flatten(fetches, leaves)
        feeds = self._feeds(feed_dict) if feed_dict else {}
        targets = [leaf._node if isinstance(leaf, Operation) else leaf._value for leaf in leaves]
        try:
            arrays = self._runner.run(targets, feeds, self._state)
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
        values = [None if a is None else (a[()] if a.ndim == 0 else np.array(a)) for a in arrays]
        return _rebuild(structure, values)

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


class _Leaf:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def _rebuild(structure: Any, values: list[Any]) -> Any:
    if isinstance(structure, _Leaf):
        return values[structure.index]
    if isinstance(structure, list | tuple):
        items = [_rebuild(s, values) for s in structure]
        return type(structure)(items) if isinstance(structure, list) else tuple(items)
    return {k: _rebuild(v, values) for k, v in structure.items()}
