"""L-BFGS: limited-memory BFGS with an optional strong-Wolfe line search.

The arithmetic follows PyTorch's ``torch.optim.LBFGS`` operation for operation (0-d tensors and
Python numbers mixed where PyTorch mixes them), so the iterates, the number of function
evaluations and the state are PyTorch's. The line search is the bracketing and zoom search of
Nocedal and Wright (algorithms 3.5 and 3.6) with cubic interpolation, as in minFunc.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from ..ops.creation import zeros
from ..ops.shape import cat
from .optimizer import Optimizer, add_scaled_, check_tensor_lr, to_scalar

__all__ = ["LBFGS"]

Number = Any  # a Python number or a 0-d tensor, as PyTorch's L-BFGS mixes them


def _cubic_minimum(x1: Number, f1: Number, g1: Number, x2: Number, f2: Number, g2: Number,
                   bounds: tuple[Number, Number] | None = None) -> Number:
    """The minimiser of the cubic through ``(x1, f1)``, ``(x2, f2)`` with slopes ``g1``,
    ``g2``, clamped to ``bounds`` (the interval between the points by default); the bounds'
    midpoint when the cubic has no minimum."""
    if bounds is None:
        low, high = (x1, x2) if x1 <= x2 else (x2, x1)
    else:
        low, high = bounds
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if not d2_square >= 0:
        return (low + high) / 2.0
    d2 = d2_square.sqrt() if isinstance(d2_square, Tensor) else math.sqrt(d2_square)
    if x1 <= x2:
        position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(position, low), high)


def _strong_wolfe(evaluate: Callable[[Number], tuple[float, Tensor]], t: Number, d: Tensor,
                  f: float, g: Tensor, gtd: Tensor, c1: float = 1e-4, c2: float = 0.9,
                  tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, Tensor, Number, int]:
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions (sufficient decrease ``c1``,
    curvature ``c2``), from the loss ``f``, gradient ``g`` and slope ``gtd`` at ``t = 0``;
    returns the loss and gradient there, ``t`` and the number of evaluations."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = evaluate(t)
    evaluations = 1
    gtd_new = g_new.dot(d)

    # Bracketing: grow t until an interval holds a point meeting the conditions.
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    iteration = 0
    bracket: list[Number] = []
    bracket_f: list[Number] = []
    bracket_g: list[Tensor] = []
    bracket_gtd: list[Number] = []
    while iteration < max_ls:
        if f_new > (f + c1 * t * gtd) or (iteration > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        # extrapolate, between 1.01 t - 0.01 t_prev and 10 t
        lowest = t + 0.01 * (t - t_prev)
        highest = t * 10
        previous = t
        t = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                           bounds=(lowest, highest))
        t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new.clone(), gtd_new
        f_new, g_new = evaluate(t)
        evaluations += 1
        gtd_new = g_new.dot(d)
        iteration += 1
    if iteration == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # Zoom: shrink the bracket until a point meets the conditions.
    stalled = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and iteration < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(bracket[0], bracket_f[0], bracket_gtd[0],
                           bracket[1], bracket_f[1], bracket_gtd[1])
        # keep t a tenth of the bracket away from its ends (or move it there when the last
        # step also came that close)
        top, bottom = max(bracket), min(bracket)
        margin = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < margin:
            if stalled or t >= top or t <= bottom:
                t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        f_new, g_new = evaluate(t)
        evaluations += 1
        gtd_new = g_new.dot(d)
        iteration += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            # not enough decrease: t is the new high end
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new.clone(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new.clone(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evaluations


class LBFGS(Optimizer):
    """L-BFGS, step for step as ``torch.optim.LBFGS``: each ``step(closure)`` runs up to
    ``max_iter`` iterations (``max_eval`` evaluations of ``closure``, which recomputes the loss
    and its gradients), the direction from the last ``history_size`` curvature pairs, the step
    ``lr`` (scaled on the very first iteration) or, with ``line_search_fn='strong_wolfe'``, the
    strong-Wolfe step. One parameter group only; state lives under the first parameter.

    Example:
        >>> import chainrule as torch
        >>> x = torch.nn.Parameter(torch.tensor([1.5, -0.5]))
        >>> opt = torch.optim.LBFGS([x], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = ((x - 1) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> _ = opt.step(closure); x
        Parameter containing:
        tensor([1., 1.], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr, "max_iter": max_iter, "max_eval": max_eval,
            "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
            "history_size": history_size, "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]
        self._numel_cache: int | None = None

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        """Every parameter's gradient (zeros for none) as one vector."""
        return cat([zeros(p.numel(), dtype=p.dtype) if p.grad is None else p.grad.view(-1)
                    for p in self._params], 0)

    def _add_grad(self, step_size: Number, update: Tensor) -> None:
        """``p += step_size * update`` with ``update`` cut to each parameter's shape."""
        offset = 0
        for p in self._params:
            count = p.numel()
            add_scaled_(p, update[offset:offset + count].view_as(p), step_size)
            offset += count

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[Tensor], t: Number,
                              d: Tensor) -> tuple[float, Tensor]:
        """The loss and flat gradient at ``x + t d``; the parameters are restored to ``x``."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        for p, saved in zip(self._params, x, strict=True):
            p.copy_(saved)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Up to ``max_iter`` L-BFGS iterations; returns the loss ``closure()`` gave first."""
        group = self.param_groups[0]
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            # PyTorch raises this once an iteration reaches the line search (after the first
            # evaluation of the closure); refused here before anything is touched
            raise RuntimeError("only 'strong_wolfe' is supported")
        self._opt_called = True
        with no_grad():
            return self._iterate(closure, group)

    def _closure(self, closure: Callable[[], Any]) -> Any:
        with enable_grad():
            return closure()

    def _iterate(self, closure: Callable[[], Any], group: dict[str, Any]) -> Any:
        lr = to_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = self._closure(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        # the previous step's direction, step length, curvature pairs ... (None at first)
        d: Any = state.get("d")
        t: Any = state.get("t")
        old_dirs: Any = state.get("old_dirs")
        old_stps: Any = state.get("old_stps")
        ro: Any = state.get("ro")
        h_diag: Any = state.get("H_diag")
        prev_flat_grad: Any = state.get("prev_flat_grad")
        prev_loss: Any = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                # the curvature pair of the last step, kept when y's > 1e-10
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                # two-loop recursion: d = -H g
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    add_scaled_(q, old_dirs[i], -al[i])
                d = r = q.mul(h_diag)
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    add_scaled_(r, old_stps[i], al[i] - be_i)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break  # not a descent direction

            evaluations = 0
            if group["line_search_fn"] is not None:
                x_init = [p.clone() for p in self._params]

                def evaluate(step: Number, x: list[Tensor] = x_init,
                             direction: Tensor = d) -> tuple[float, Tensor]:
                    return self._directional_evaluate(
                        lambda: self._closure(closure), x, step, direction)

                loss, flat_grad, t, evaluations = _strong_wolfe(
                    evaluate, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(self._closure(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    evaluations = 1
            current_evals += evaluations
            state["func_evals"] += evaluations

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = d
        state["t"] = t
        state["old_dirs"] = old_dirs
        state["old_stps"] = old_stps
        state["ro"] = ro
        state["H_diag"] = h_diag
        state["prev_flat_grad"] = prev_flat_grad
        state["prev_loss"] = prev_loss
        return orig_loss
