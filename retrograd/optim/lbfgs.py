"""L-BFGS: limited-memory quasi-Newton steps, with an optional strong-Wolfe line search."""
from __future__ import annotations

import math

from ..autograd import grad_mode
from ..ops import cat
from .optimizer import Optimizer, _check_lr, _scalar

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    """L-BFGS, as ``torch.optim.LBFGS``: each ``step(closure)`` runs up to ``max_iter`` iterations.

    Each iteration turns the flattened gradient into a search direction with the two-loop recursion
    over the last ``history_size`` curvature pairs (``s``: the step taken, ``y``: the change of
    gradient), then moves by ``lr`` along it (the first iteration ever by ``min(1, 1 / |g|_1) * lr``)
    or by the step a strong-Wolfe line search finds. The iterations stop early when the gradient,
    the step or the loss change fall under the tolerances, or after ``max_eval`` evaluations of the
    closure. The state (direction, history, last gradient and loss) is kept under the first parameter,
    with PyTorch's keys. Scalars of the state (``t``, ``H_diag``, ``ro``, ``al``, ``prev_loss``) are
    Python floats where PyTorch keeps 0-dim tensors; a state dict loaded from PyTorch may hold either.

    Args:
        params (iterable): the tensors to optimize, in a single group.
        lr (float): learning rate (default 1).
        max_iter (int): iterations per ``step`` (default 20).
        max_eval (int, optional): closure evaluations per ``step`` (default ``max_iter * 5 // 4``).
        tolerance_grad (float): stop when the largest gradient entry is at most this (default 1e-7).
        tolerance_change (float): stop when a step or loss change is under this (default 1e-9).
        history_size (int): the number of curvature pairs kept (default 100).
        line_search_fn (str, optional): ``"strong_wolfe"`` or None (default None: a fixed step).

    Raises:
        ValueError: a negative ``lr``, or more than one parameter group.

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([3.0, -1.0], dtype=rg.float64, requires_grad=True)
        >>> opt = rg.optim.LBFGS([w], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = ((w - 1) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> _ = opt.step(closure); [round(v, 6) for v in w.tolist()]
        [1.0, 1.0]
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        """Every parameter's gradient (zeros where it has none), flattened into one new vector."""
        return cat([p.new_zeros(p.numel()) if p._grad is None else p._grad.reshape(-1) for p in self._params])

    def _add_to_params(self, step_size, direction):
        """Adds ``step_size * direction`` (a flat vector) to the parameters, in place."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset:offset + n].view_as(p), alpha=step_size)
            offset += n

    def _evaluate_at(self, closure, x, t, d):
        """The loss and flat gradient at ``x + t * d``; the parameters are put back to ``x`` after."""
        self._add_to_params(t, d)
        loss = float(closure())
        flat_grad = self._flat_grad()
        for p, saved in zip(self._params, x, strict=True):
            p.copy_(saved)
        return loss, flat_grad

    def step(self, closure):
        """Performs up to ``max_iter`` L-BFGS iterations. See Note [Optimizer updates] in optimizer.py.

        Args:
            closure (callable): re-evaluates the model, calls ``backward`` and returns the loss.

        Returns:
            The closure's loss at the start of the step.

        Raises:
            RuntimeError: ``line_search_fn`` is neither None nor ``"strong_wolfe"``.
        """
        with grad_mode.no_grad():
            return self._run(lambda: self._eval_closure(closure))

    def _run(self, closure):
        """The body of ``step``, with ``closure`` already running under grad mode."""
        group = self.param_groups[0]
        lr = _scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max().item() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), _maybe_scalar(state.get("t"))
        old_dirs, old_stps = state.get("old_dirs"), state.get("old_stps")
        ro = None if state.get("ro") is None else [_scalar(r) for r in state["ro"]]
        H_diag = _maybe_scalar(state.get("H_diag"))
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), _maybe_scalar(state.get("prev_loss"))

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s).item()
                if ys > 1e-10:  # keep the pair only where the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y).item()
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q).item() * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = q.mul(H_diag)
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r).item() * ro[i]
                    r.add_(old_stps[i], alpha=_scalar(al[i]) - be_i)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            t = min(1.0, 1.0 / flat_grad.abs().sum().item()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d).item()
            if gtd > -tolerance_change:  # not a descent direction
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.clone() for p in self._params]

                def obj_func(x, step, direction):
                    return self._evaluate_at(closure, x, step, direction)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_to_params(t, d)
                opt_cond = flat_grad.abs().max().item() <= tolerance_grad
            else:
                self._add_to_params(t, d)
                opt_cond = False
                if n_iter != max_iter:  # the last iteration's loss is left to the next step
                    loss = float(closure())
                    flat_grad = self._flat_grad()
                    opt_cond = flat_grad.abs().max().item() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max().item() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss


def _maybe_scalar(value):
    """A state scalar as a float (None stays None; a 0-dim tensor from a loaded state gives its value)."""
    return None if value is None else _scalar(value)


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through two points with their slopes, clamped to ``bounds``.

    Without a real minimizer, the middle of the bounds (by default the interval between the points).
    """
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, lo), hi)


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions (sufficient decrease, curvature).

    First widens the step until a bracket holds a point meeting them, then narrows the bracket by
    cubic interpolation (the zoom phase of Nocedal and Wright, Algorithm 3.5/3.6, as minFunc does).

    Returns:
        ``(loss, flat_grad, t, evaluations)`` at the step found.
    """
    d_norm = d.abs().max().item()
    g = g.clone()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d).item()

    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket = bracket_f = bracket_g = bracket_gtd = None
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
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
        # Extrapolate, at least 1% further and at most ten times as far.
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        f_prev, g_prev, gtd_prev = f_new, g_new.clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d).item()
        ls_iter += 1

    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # Keep t away from the ends of the bracket, unless the last step already made progress.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d).item()
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.clone(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.clone(), gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals
