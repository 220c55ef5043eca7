"""Random sampling: multinomial, bernoulli, normal, poisson, and Tensor's in-place initialisers.

Every draw comes from a ``retrograd._random`` generator (``generator=``, else the default one, which
``rg.manual_seed`` seeds), on the host: the numbers are NumPy's stream, the same on every device,
and not PyTorch's. As in PyTorch, a sample of a tensor that requires grad requires grad too, with
a zero gradient (the draw is not reparameterised); the in-place initialisers write through
``copy_``, so the overwritten values get a zero gradient and the leaf checks are copy_'s.
"""
from __future__ import annotations

import numpy as np

from .. import _creation, _dtype
from .._random import default_generator, vmap_randomness
from .._tensor import Tensor
from ._declarations import defop, tensor_method


def _rng(generator):
    return (generator or default_generator).np


def _host(xp, array):
    """``array`` as a NumPy array (a device array is copied to the host)."""
    return array if xp is np else xp.asnumpy(array)


_type_name = _dtype.scalar_type_name


def _zero_grad(grad):
    """The gradient of a random draw with respect to its parameters: zero, as PyTorch's."""
    return grad * 0


# -- multinomial -----------------------------------------------------------------------------------
def _multinomial(xp, input, num_samples, replacement=False, *, generator=None):
    if input.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_type_name(input.dtype)}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    p = _host(xp, input).astype(np.float64).reshape(-1, input.shape[-1])
    if not np.isfinite(p).all() or (p < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = p.sum(axis=1, keepdims=True)
    if (total <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _rng(generator)
    p = p / total
    if replacement:  # inverse transform sampling on each row's cumulative distribution
        cdf = np.cumsum(p, axis=1)
        u = rng.random((p.shape[0], num_samples)) * cdf[:, -1:]
        out = np.stack([np.searchsorted(c, row, side="right") for c, row in zip(cdf, u, strict=True)])
        out = np.minimum(out, p.shape[1] - 1)
    else:  # the largest keys -E/p (E exponential): a weighted draw without replacement, zeros last
        with np.errstate(divide="ignore"):
            keys = -rng.standard_exponential(p.shape) / p
        out = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    out = out.astype(np.int64).reshape(input.shape[:-1] + (num_samples,))
    return xp.asarray(out)


multinomial = defop("multinomial", _multinomial, method=True)


# -- bernoulli, poisson ----------------------------------------------------------------------------
def _bernoulli(xp, input, p=None, *, generator=None):
    if p is None:
        if input.dtype.kind != "f":
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{_type_name(input.dtype)}'")
        probs = _host(xp, input)
        if ((probs < 0) | (probs > 1)).any():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        probs = p
    draws = _rng(generator).random(input.shape) < probs
    return xp.asarray(draws.astype(input.dtype))


bernoulli = defop("bernoulli", _bernoulli, method=True, input=_zero_grad)


def _dropout_bernoulli(xp, input, p, generator=None):
    """Bernoulli(``p``) draws of ``input``'s shape and dtype: dropout's mask, drawn in place into an empty tensor as
    PyTorch's ``bernoulli_(p)`` is (Note [Factories as op calls]); the draws are ``bernoulli``'s."""
    return xp.asarray((_rng(generator).random(input.shape) < p).astype(input.dtype))


dropout_bernoulli = defop("dropout_bernoulli", _dropout_bernoulli, public=False, tensor_args=("input",))


def _poisson(xp, input, generator=None):
    if input.dtype.kind != "f":
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_type_name(input.dtype)}'")
    rates = _host(xp, input)
    if (rates < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return xp.asarray(_rng(generator).poisson(rates).astype(input.dtype))


poisson = defop("poisson", _poisson, input=_zero_grad)


# -- normal ----------------------------------------------------------------------------------------
def _normal_draw(xp, mean, std, generator=None):
    like = mean if hasattr(mean, "dtype") else std  # the result has the mean's dtype (the std's for a number)
    if like.dtype.kind != "f":
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{_type_name(like.dtype)}'")
    m, s = _host(xp, xp.asarray(mean)), _host(xp, xp.asarray(std))
    if (s < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0" if hasattr(std, "dtype") else
                           f"normal expects std >= 0.0, but found std {std:g}")
    try:
        shape = np.broadcast_shapes(m.shape, s.shape)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({m.shape[-1]}) must match the size of tensor b ({s.shape[-1]}) "
                           f"at non-singleton dimension {max(m.ndim, s.ndim) - 1}") from None
    return xp.asarray((m + s * _rng(generator).standard_normal(shape)).astype(like.dtype))


_normal_op = defop("normal", _normal_draw, public=False, tensor_args=("mean", "std"),
                   mean=_zero_grad, std=_zero_grad)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Normal draws of means ``mean`` and deviations ``std`` (tensors that broadcast, or numbers with ``size``)."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        return _normal_op(mean, std, generator)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - got (float, float), but expected "
                        "one of:")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    shape = tuple(size)
    randomness = vmap_randomness()  # See Note [Randomness under vmap]
    batch = () if randomness is None else randomness.batch()
    draws = mean + std * _rng(generator).standard_normal(batch + shape)
    out = _creation.tensor(draws, dtype=dtype or _dtype.get_default_dtype(), device=device,
                           requires_grad=requires_grad)
    return out if randomness is None else randomness.wrap(out)


# -- the in-place initialisers of Tensor ----------------------------------------------------------
def fill_drawn(self, draw, copy=None):
    """Writes the host array ``draw(size)`` (a draw of ``size``) into ``self``: by ``copy_`` (its version,
    history and leaf checks), or by ``copy(self, values)``, given the values in their own dtype. Under a vmap, the batch its
    randomness asks for goes in front of ``self``'s shape (Note [Randomness under vmap])."""
    shape = tuple(self.shape)
    randomness = vmap_randomness()
    batch = () if randomness is None else randomness.batch(into=self)
    values = _creation.tensor(np.asarray(draw(batch + shape)), dtype=self.dtype if copy is None else None,
                              device=self.device)
    if randomness is not None:
        values = randomness.wrap(values)
    return self.copy_(values) if copy is None else copy(self, values)


def _floating_only(self, kernel):
    if not self.is_floating_point():
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(self._data.dtype)}'")


def _from_to(names, a, b, defaults):
    """PyTorch's ``from``/``to`` arguments (Python keywords, so passed by name through ``names``)."""
    a = names.pop("from", a)
    b = names.pop("to", b)
    if names:
        raise TypeError(f"got an unexpected keyword argument '{next(iter(names))}'")
    return (defaults[0] if a is None else a), (defaults[1] if b is None else b)


def uniform_(self, *args, generator=None, **names):
    """Fills ``self`` with numbers drawn uniformly from [``from``, ``to``) (default [0, 1))."""
    low, high = _from_to(names, *(args + (None, None))[:2], (0.0, 1.0))
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={low:g} > to={high:g}")
    _floating_only(self, "check_uniform_bounds")
    return fill_drawn(self, lambda size: _rng(generator).uniform(low, high, size))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fills ``self`` with numbers drawn from the normal distribution N(``mean``, ``std``^2)."""
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    _floating_only(self, "normal_kernel_cpu")
    return fill_drawn(self, lambda size: _rng(generator).normal(mean, std, size))


def exponential_(self, lambd=1.0, *, generator=None):
    """Fills ``self`` with numbers drawn from the exponential distribution of rate ``lambd``."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _floating_only(self, "exponential_cpu")
    return fill_drawn(self, lambda size: _rng(generator).exponential(1.0 / lambd, size))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fills ``self`` with numbers drawn from the Cauchy distribution at ``median`` of scale ``sigma``."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _floating_only(self, "cauchy_cpu")
    return fill_drawn(self, lambda size: median + sigma * _rng(generator).standard_cauchy(size))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fills ``self`` with ``exp`` of numbers drawn from N(``mean``, ``std``^2)."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    _floating_only(self, "log_normal_cpu")
    return fill_drawn(self, lambda size: _rng(generator).lognormal(mean, std, size))


def geometric_(self, p, *, generator=None):
    """Fills ``self`` with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return fill_drawn(self, lambda size: _rng(generator).geometric(p, size))


def _random_bound(self):
    """One more than the largest integer ``random_()`` draws for ``self``'s dtype, as PyTorch."""
    dt = self._data.dtype
    if dt.kind == "f":
        return 2 ** (np.finfo(dt).nmant + 1) + 1
    if dt.kind == "b":
        return 2
    return int(np.iinfo(dt).max) + 1


def random_(self, *args, generator=None, **names):
    """Fills ``self`` with integers drawn uniformly from [``from``, ``to`` - 1]; ``random_(to)`` from [0, to)."""
    if len(args) == 1 and "to" not in names:
        args = (0, args[0])
    low, high = _from_to(names, *(args + (None, None))[:2], (0, None))
    if high is None:
        high = _random_bound(self)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return fill_drawn(self, lambda size: _rng(generator).integers(low, high, size, dtype=np.int64, endpoint=False))


def bernoulli_(self, p=0.5, *, generator=None):
    """Fills ``self`` with 1 with probability ``p`` (a number or a tensor of probabilities), else 0."""
    if not isinstance(p, Tensor):
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        return fill_drawn(self, lambda size: _rng(generator).random(size) < p)
    if vmap_randomness() is None:
        probs = np.broadcast_to(p._host(), tuple(self.shape))
        return fill_drawn(self, lambda size: _rng(generator).random(size) < probs)
    # under a vmap the probabilities may be batched: the uniform draws are compared with them as tensors
    return fill_drawn(self, lambda size: _rng(generator).random(size), copy=lambda t, u: t.copy_(u < p))


for _method in (uniform_, normal_, exponential_, cauchy_, log_normal_, geometric_, random_, bernoulli_):
    tensor_method(_method)
del _method

# -- forward derivatives (Note [Forward derivatives]) ---------------------------------------------------
from ._declarations import FROM_BACKWARD, defjvp  # noqa: E402

defjvp(FROM_BACKWARD, "bernoulli", "poisson", "normal")
