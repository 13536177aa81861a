"""``tf.train``: gradient descent as graph operations."""

from __future__ import annotations

from typing import Any

from ..ops import pointwise
from . import variables
from .framework import Operation, Tensor, convert_to_tensor, get_default_graph
from .gradients import gradients

__all__ = ["GradientDescentOptimizer", "Optimizer"]


def _apply_gradient_descent(var: Any, alpha: Any, delta: Any) -> Any:
    """``var - alpha * delta`` (TensorFlow's ApplyGradientDescent)."""
    return pointwise._sub(var, pointwise.mul(delta, alpha))


class Optimizer:
    """The base of TensorFlow 1's optimizers: ``minimize`` = ``compute_gradients`` then
    ``apply_gradients``."""

    def __init__(self, use_locking: bool, name: str) -> None:
        self._use_locking = use_locking
        self._name = name

    def get_name(self) -> str:
        """The optimizer's name (its operations' scope)."""
        return self._name

    def compute_gradients(
        self, loss: Any, var_list: list[Any] | None = None, **_: Any
    ) -> list[tuple[Tensor | None, Any]]:
        """``(gradient, variable)`` pairs for the trainable variables (or ``var_list``)."""
        if var_list is None:
            var_list = variables.trainable_variables()
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients(loss, var_list)
        return list(zip(grads, var_list, strict=True))

    def apply_gradients(
        self, grads_and_vars: Any, global_step: Any = None, name: str | None = None
    ) -> Operation:
        """One operation updating every variable that has a gradient."""
        pairs = list(grads_and_vars)
        if all(g is None for g, _ in pairs):
            raise ValueError(
                f"No gradients provided for any variable: {[str(v) for _, v in pairs]}."
            )
        if global_step is not None:
            raise NotImplementedError("apply_gradients(global_step=...) is not supported yet")
        graph = get_default_graph()
        with graph.name_scope(name or self._name) as scope:
            updates = self._updates(graph, [(g, v) for g, v in pairs if g is not None])
            node = graph.ir.group(updates, name=scope[:-1])
        return graph._operation(node)

    def _updates(self, graph: Any, pairs: list[tuple[Tensor, Any]]) -> list[Any]:
        raise NotImplementedError

    def minimize(
        self,
        loss: Any,
        global_step: Any = None,
        var_list: list[Any] | None = None,
        name: str | None = None,
        **_: Any,
    ) -> Operation:
        """The operation of one descent step on ``loss``."""
        return self.apply_gradients(self.compute_gradients(loss, var_list), global_step, name)


class GradientDescentOptimizer(Optimizer):
    """``variable -= learning_rate * gradient`` for each variable."""

    def __init__(
        self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent"
    ) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _updates(self, graph: Any, pairs: list[tuple[Tensor, Any]]) -> list[Any]:
        updates = []
        lr: Tensor | None = None
        for grad, var in pairs:
            if lr is None:
                lr = convert_to_tensor(
                    self._learning_rate, dtype=grad.dtype.base_dtype, name="learning_rate"
                )
            with graph.name_scope(f"update_{var.op.name}") as scope:
                state = var._variable._value
                node = graph.ir.assign(
                    state,
                    None,
                    name=scope + "ApplyGradientDescent",
                    type="ApplyGradientDescent",
                    target=_apply_gradient_descent,
                    args=(state, lr._value, grad._value),
                )
            updates.append(node)
        return updates
