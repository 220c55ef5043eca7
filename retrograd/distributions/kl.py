"""``kl_divergence(p, q)`` for the pairs of distributions with a closed form, and ``register_kl``."""
from __future__ import annotations

import math

from ..ops import xlogy
from .categorical import Categorical
from .normal import Bernoulli, Normal, Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as the KL divergence of a ``type_p`` from a ``type_q``."""
    def decorator(fn):
        _KL[type_p, type_q] = fn
        return fn
    return decorator


def kl_divergence(p, q):
    """KL(p || q), elementwise over the batch.

    Raises:
        NotImplementedError: no closed form is registered for the pair of types.

    Example::
        >>> import retrograd as rg
        >>> D = rg.distributions
        >>> D.kl_divergence(D.Normal(rg.tensor(0.0), rg.tensor(1.0)), D.Normal(rg.tensor(1.0), rg.tensor(1.0)))
        tensor(0.5000)
    """
    for tp in type(p).__mro__:
        for tq in type(q).__mro__:
            fn = _KL.get((tp, tq))
            if fn is not None:
                return fn(p, q)
    raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                              f"{type(q).__name__}")


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    pp, qp = p.probs, q.probs  # sum of a log(a / b) over both outcomes, 0 log 0 being 0
    return xlogy(pp, pp) - xlogy(pp, qp) + xlogy(1 - pp, 1 - pp) - xlogy(1 - pp, 1 - qp)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill(q.probs == 0, math.inf)
    t = t.masked_fill(p.probs == 0, 0)
    return t.sum(-1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return result.masked_fill(outside, math.inf)
