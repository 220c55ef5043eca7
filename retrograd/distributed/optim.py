"""DistributedOptimizer: steps parameters that live on several workers, from a context's gradients."""
from __future__ import annotations

from . import autograd as dist_autograd, rpc

__all__ = ["DistributedOptimizer"]


class _LocalOptimizer:
    """Lives on a parameters' owner: one ordinary optimizer over that worker's parameters."""

    def __init__(self, optimizer_class, param_rrefs, args, kwargs):
        self.params = [r.local_value() for r in param_rrefs]
        self.optim = optimizer_class(self.params, *args, **kwargs)

    def step(self, context_id):
        grads = dist_autograd.get_gradients(context_id)
        saved = [p.grad for p in self.params]
        try:  # the optimizer reads .grad: lend it the context's gradients for this step only
            for p in self.params:
                p.grad = grads.get(p)
            self.optim.step()
        finally:
            for p, g in zip(self.params, saved, strict=True):
                p.grad = g


def _new_local(optimizer_class, param_rrefs, args, kwargs):
    return _LocalOptimizer(optimizer_class, param_rrefs, args, kwargs)


def _step(local_rref, context_id):
    local_rref.local_value().step(context_id)


class DistributedOptimizer:
    """Runs ``optimizer_class`` on every worker that owns some of ``params_rref``.

    Args:
        optimizer_class: e.g. ``retrograd.optim.SGD``; built on each owner over its parameters.
        params_rref (list of RRef): the parameters, wherever they live.
        *args, **kwargs: passed to ``optimizer_class``.

    Example::
        >>> opt = DistributedOptimizer(optim.SGD, [rpc.RRef(w), remote_w_rref], lr=0.1)  # doctest: +SKIP
        >>> with dist_autograd.context() as cid:                                          # doctest: +SKIP
        ...     dist_autograd.backward(cid, [loss]); opt.step(cid)
    """

    def __init__(self, optimizer_class, params_rref, *args, **kwargs):
        by_owner = {}
        for rref in params_rref:
            by_owner.setdefault(rref.owner().id, []).append(rref)
        self._locals = [rpc.remote(owner, _new_local, args=(optimizer_class, rrefs, args, kwargs))
                        for owner, rrefs in by_owner.items()]

    def step(self, context_id) -> None:
        """Steps every worker's parameters with the gradients of ``context_id``, in parallel."""
        futures = [rpc.rpc_async(r.owner(), _step, args=(r, context_id)) for r in self._locals]
        for f in futures:
            f.wait()
